import type { FromChild, ToChild } from './ipc.ts';

export interface RunningServer<Info> {
  /** Reported to the parent once the server listens. */
  info: Info;
  close(): Promise<void>;
}

/**
 * The child side of bench/lib/server-process.ts: waits for its setup input, starts the server with
 * `setup`, reports `info`, and closes everything when told to stop or when the parent goes away (so
 * an interrupted bench leaves no server behind).
 */
export function serveFromChild<Init, Info>(setup: (init: Init) => Promise<RunningServer<Info>>): void {
  if (!process.send) throw new Error('Run this module through bench/lib/server-process.ts (it needs IPC).');
  let running: RunningServer<Info> | null = null;
  let stopping = false;

  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await running?.close();
    process.exit(0);
  };

  process.on('message', (message: ToChild) => {
    if (message.type === 'stop') void stop();
    else void start(message.init as Init);
  });
  process.once('disconnect', () => void stop());

  const start = async (init: Init) => {
    try {
      running = await setup(init);
      send({ type: 'ready', info: running.info });
    } catch (error) {
      send({
        type: 'failed',
        error: error instanceof Error ? (error.stack ?? error.message) : String(error),
      });
      process.exit(1);
    }
  };

  send({ type: 'hello' });
}

function send(message: FromChild): void {
  process.send?.(message);
}
