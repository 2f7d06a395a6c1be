import { describe, expect, it } from 'vitest';
import { allEnded, startPeriodicWork } from '../../src/app/periodic-work.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('periodic work', () => {
  it('waits a drawn 0.5 to 1.5 intervals between passes, never runs two at once, and stop waits for the pass', async () => {
    const draws = [0, 0.999, 0, 0.999, 0, 0.999];
    let draw = 0;
    const began: number[] = [];
    let inPass = 0;
    let most = 0;
    let finished = 0;
    const stop = startPeriodicWork(
      async () => {
        began.push(Date.now());
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
    await sleep(260);
    const passes = began.length;
    await stop();
    expect(most).toBe(1);
    expect(finished).toBe(began.length);
    // Gaps alternate short (0.5 x 40 = 20 ms) and long (1.5 x 40 = 60 ms), measured from each start.
    const gaps = began.slice(1).map((at, i) => at - began[i]!);
    expect(passes).toBeGreaterThanOrEqual(4);
    for (const [i, gap] of gaps.entries()) {
      const drawn = i % 2 === 0 ? 60 : 20;
      expect(gap, `gap ${i}`).toBeGreaterThanOrEqual(drawn - 2);
    }
    expect(Math.min(...gaps.filter((_, i) => i % 2 === 1))).toBeLessThan(40);
    await sleep(100);
    expect(began.length).toBe(passes);
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
