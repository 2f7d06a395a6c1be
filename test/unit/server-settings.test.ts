import { describe, expect, it } from 'vitest';
import {
  canReexecute,
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

  it('are all applied where Node can re-execute in place, else only the flags V8 reads at run time', () => {
    const canExec = canReexecute();
    expect(serverSettingsOnThisNode()).toEqual(
      canExec
        ? { flags: [...SERVER_V8_FLAGS], environment: { ...SERVER_ENV } }
        : { flags: ['--heap-growing-percent=60'], environment: {} },
    );
  });
});
