import { describe, expect, it } from 'vitest';
import { onDemand } from '../../src/http/on-demand.ts';

/** src/http/on-demand.ts: how the MCP protocol and the SSE transport are loaded by a server. */
describe('onDemand', () => {
  it('loads nothing until asked, then once for all who ask, during the load and after', async () => {
    let loads = 0;
    let finish: (value: string) => void = () => {};
    const load = onDemand(() => {
      loads += 1;
      return new Promise<string>((resolve) => {
        finish = resolve;
      });
    });
    expect(loads).toBe(0);
    const during = [load(), load(), load()];
    finish('loaded');
    expect(await Promise.all(during)).toEqual(['loaded', 'loaded', 'loaded']);
    expect(await load()).toBe('loaded');
    expect(loads).toBe(1);
  });

  it('gives a failure to those who asked, and loads again for the next', async () => {
    let loads = 0;
    const load = onDemand(async () => {
      loads += 1;
      if (loads === 1) throw new Error('not this time');
      return 'loaded';
    });
    const failed = await Promise.allSettled([load(), load()]);
    expect(failed.map((each) => each.status)).toEqual(['rejected', 'rejected']);
    expect(loads).toBe(1);
    expect(await load()).toBe('loaded');
    expect(await load()).toBe('loaded');
    expect(loads).toBe(2);
  });
});
