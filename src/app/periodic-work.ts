/**
 * Runs `pass` about every `intervalMs` until stopped, never two at once; a failure goes to
 * `onError`, never fatal. The returned stop waits for the pass in progress, so a shutdown can close
 * the database after it without cutting a write short. `pass` is told whether a stop was asked, to
 * end a long pass early.
 *
 * Each wait is drawn between 0.5 and 1.5 times the interval (the mean stays `intervalMs`): servers
 * started together on one database would otherwise poll in lockstep, and the one a hair ahead would
 * claim every due item on every tick while the others only ever find nothing.
 */
export function startPeriodicWork(
  pass: (stopping: () => boolean) => Promise<unknown>,
  onError: (error: unknown) => void,
  intervalMs: number,
  random: () => number = Math.random,
): () => Promise<void> {
  let running: Promise<void> | null = null;
  let timer: NodeJS.Timeout | null = null;
  let stopped = false;
  /**
   * The next pass comes a drawn wait after the last one began (a long pass is followed at once),
   * timed by the monotonic clock: a wall clock set back must not hold the workers for as long.
   */
  const schedule = (lastBegan: number) => {
    if (stopped) return;
    const wait = intervalMs * (0.5 + random()) - (performance.now() - lastBegan);
    timer = setTimeout(tick, Math.max(0, wait));
    timer.unref();
  };
  const tick = () => {
    timer = null;
    if (stopped) return;
    const began = performance.now();
    running = pass(() => stopped)
      .then(() => undefined, onError)
      .finally(() => {
        running = null;
        schedule(began);
      });
  };
  schedule(performance.now());
  return async () => {
    stopped = true;
    if (timer) clearTimeout(timer);
    await running;
  };
}

/**
 * Waits for every piece of work a pass started, then fails with the first failure, if any. A pass
 * must not end while some of its work is still out (Promise.all ends at the first failure): a stop
 * waits for the pass, then closes the database.
 */
export async function allEnded<T>(work: readonly Promise<T>[]): Promise<T[]> {
  const ended = await Promise.allSettled(work);
  const failed = ended.find((outcome) => outcome.status === 'rejected');
  if (failed) throw failed.reason;
  return ended.map((outcome) => (outcome as PromiseFulfilledResult<T>).value);
}
