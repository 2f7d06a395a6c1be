import { describe, expect, it } from 'vitest';
import { isStorageFailure, StorageHealth } from '../../src/data/storage-health.ts';

const failure = (code: string) => Object.assign(new Error(code), { code });

describe('storage health', () => {
  it('tells storage failures of both databases from failures of the query', () => {
    for (const code of [
      'SQLITE_FULL',
      'SQLITE_IOERR_WRITE',
      'SQLITE_READONLY',
      'SQLITE_CORRUPT',
      '53100',
      '58030',
      '25006',
    ]) {
      expect(isStorageFailure(failure(code)), code).toBe(true);
    }
    for (const code of ['SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_BUSY', '23505', '40001', '53300']) {
      expect(isStorageFailure(failure(code)), code).toBe(false);
    }
    expect(isStorageFailure(new Error('no code'))).toBe(false);
  });

  it('reports a storage failure until a write succeeds after it, and ignores other failures', () => {
    const health = new StorageHealth();
    expect(health.problem()).toBeNull();
    health.failed(failure('SQLITE_CONSTRAINT_UNIQUE'));
    expect(health.problem()).toBeNull();
    const full = failure('SQLITE_FULL');
    health.failed(full);
    expect(health.problem()).toBe(full);
    health.written();
    expect(health.problem()).toBeNull();
  });
});
