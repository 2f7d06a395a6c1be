/** Types of bin/bundle.js, for the tests written in TypeScript. */
export declare const BUNDLE_STARTED: symbol;
export declare function bundledEntry(
  entry: string,
  cacheDir: string,
  options?: { packagesInside?: boolean },
): Promise<{ entryUrl: string; dirUrl: string }>;
export declare function forgetBundle(cacheDir: string): void;
