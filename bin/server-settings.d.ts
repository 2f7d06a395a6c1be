/** Types of bin/server-settings.js, for the benchmarks and tests written in TypeScript. */
export declare const SERVER_V8_FLAGS: readonly string[];
export declare const SERVER_SEMI_SPACE_BYTES: number;
export declare const SERVER_ENV: Readonly<Record<string, string>>;
export declare function missingServerSettings(
  execArgv?: readonly string[],
  env?: NodeJS.ProcessEnv,
): { flags: string[]; environment: Record<string, string> };
export declare function canReexecute(): boolean;
export declare function serverSettingsOnThisNode(): { flags: string[]; environment: Record<string, string> };
export declare function execWithServerSettings(): void;
export declare function capYoungGeneration(maxBytes: number): void;
export declare function growthFactorFor(semiSpace: number, maxBytes: number): number;
export declare function semiSpaceBytes(): number;
