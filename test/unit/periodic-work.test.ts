import { describe, expect, it, vi } from 'vitest';
import { allEnded, startPeriodicWork } from '../../src/app/periodic-work.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('periodic work', () => {
  it('waits a drawn 0.5 to 1.5 intervals between passes, never runs two at once, and stop waits for the pass', async () => {
    // On the timers' own clock (fake): a busy machine must not make a late timer look like a wrong wait.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    try {
      const draws = [0, 0.975];
      let draw = 0;
      const began: number[] = [];
      let inPass = 0;
      let most = 0;
      let finished = 0;
      const stop = startPeriodicWork(
        async () => {
          began.push(performance.now());
          inPass++;
          most = Math.max(most, inPass);
          await sleep(5);
          inPass--;
          finished++;
        },
        () => {},
        40,
        () => draws[draw++ % draws.length]!,
      );
      await vi.advanceTimersByTimeAsync(260);
      // The first wait is drawn too (0.5 x 40); then each gap, from one start to the next, alternates
      // long (1.475 x 40) and short (0.5 x 40), the 5 ms of each pass inside it. The seventh pass runs.
      expect(began).toEqual([20, 79, 99, 158, 178, 237, 257]);
      expect(finished).toBe(6);
      const stopped = stop();
      await vi.advanceTimersByTimeAsync(5);
      await stopped;
      expect(finished).toBe(7);
      expect(most).toBe(1);
      await vi.advanceTimersByTimeAsync(200);
      expect(began).toHaveLength(7);
    } finally {
      vi.useRealTimers();
    }
  });

  it('reports a failed pass and goes on', async () => {
    const errors: unknown[] = [];
    let calls = 0;
    const stop = startPeriodicWork(
      async () => {
        calls++;
        if (calls === 1) throw new Error('disk gone');
      },
      (error) => errors.push(error),
      10,
    );
    await sleep(120);
    await stop();
    expect(errors).toHaveLength(1);
    expect(calls).toBeGreaterThan(2);
  });
});

describe('allEnded', () => {
  it('waits for every piece of work, then fails with the first failure', async () => {
    let slowEnded = false;
    const slow = new Promise<string>((resolve) =>
      setTimeout(() => {
        slowEnded = true;
        resolve('slow');
      }, 50),
    );
    await expect(
      allEnded([Promise.reject(new Error('first')), slow, Promise.reject(new Error('second'))]),
    ).rejects.toThrow('first');
    expect(slowEnded).toBe(true);
    expect(await allEnded<unknown>([Promise.resolve(1), slow])).toEqual([1, 'slow']);
  });
});
