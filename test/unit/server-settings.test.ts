import { describe, expect, it } from 'vitest';
import {
  canReexecute,
  growthFactorFor,
  missingServerSettings,
  SERVER_ENV,
  SERVER_V8_FLAGS,
  serverSettingsOnThisNode,
} from '../../bin/server-settings.js';

describe('the settings `booking serve` re-executes itself with', () => {
  it('are all missing from a process started without them', () => {
    expect(missingServerSettings([], {})).toEqual({
      flags: [...SERVER_V8_FLAGS],
      environment: { ...SERVER_ENV },
    });
  });

  it('are complete once the process runs with them, so it re-executes once', () => {
    expect(missingServerSettings([...SERVER_V8_FLAGS, '--import', 'tsx'], { ...SERVER_ENV })).toEqual({
      flags: [],
      environment: {},
    });
  });

  it("leave the user's own values of the same options, on the command line or in NODE_OPTIONS", () => {
    const missing = missingServerSettings(['--max_semi_space_size=32'], {
      NODE_OPTIONS: '--heap-growing-percent=50',
      MALLOC_ARENA_MAX: '8',
    });
    expect(missing).toEqual({ flags: [], environment: {} });
  });

  it("are all applied where Node can re-execute in place, else the flags but not the allocator's", () => {
    const canExec = canReexecute();
    expect(serverSettingsOnThisNode()).toEqual(
      canExec
        ? { flags: [...SERVER_V8_FLAGS], environment: { ...SERVER_ENV } }
        : { flags: [...SERVER_V8_FLAGS], environment: {} },
    );
  });
});

describe('the growth factor that holds the young generation to its size', () => {
  const MiB = 2 ** 20;

  it('takes a smaller semi-space to the size in one step', () => {
    expect(growthFactorFor(1 * MiB, 4 * MiB)).toBe(4);
    expect(growthFactorFor(2 * MiB, 4 * MiB)).toBe(2);
    expect(growthFactorFor(512 * 1024, 4 * MiB)).toBe(8);
  });

  it('grows one V8 shrank to an odd size as far as a whole factor stays within the size', () => {
    expect(growthFactorFor(1.5 * MiB, 4 * MiB)).toBe(2);
    expect(growthFactorFor(3 * MiB, 4 * MiB)).toBe(1);
  });

  it('stops a semi-space that is at the size or past it from growing', () => {
    expect(growthFactorFor(4 * MiB, 4 * MiB)).toBe(1);
    expect(growthFactorFor(16 * MiB, 4 * MiB)).toBe(1);
  });

  it("is V8's own where V8 reports no young generation, which must still grow", () => {
    expect(growthFactorFor(0, 4 * MiB)).toBe(2);
  });
});
