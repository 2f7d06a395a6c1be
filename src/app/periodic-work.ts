/**
 * Runs `pass` every `intervalMs` until stopped, never two at once (a pass still running when the
 * next tick comes skips that tick); a failure goes to `onError`, never fatal. The returned stop waits
 * for the pass in progress, so a shutdown can close the database after it without cutting a write
 * short. `pass` is told whether a stop was asked, to end a long pass early.
 */
export function startPeriodicWork(
  pass: (stopping: () => boolean) => Promise<unknown>,
  onError: (error: unknown) => void,
  intervalMs: number,
): () => Promise<void> {
  let running: Promise<void> | null = null;
  let stopped = false;
  const timer = setInterval(() => {
    if (running || stopped) return;
    running = pass(() => stopped)
      .then(() => undefined, onError)
      .finally(() => {
        running = null;
      });
  }, intervalMs);
  timer.unref();
  return async () => {
    stopped = true;
    clearInterval(timer);
    await running;
  };
}
