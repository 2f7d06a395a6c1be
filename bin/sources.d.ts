/** Types of bin/sources.js, for the tests written in TypeScript. */
export declare const ENTRY: string;
export declare const COMPILE_CACHE: string;
export declare const BUNDLE_CACHE: string;
export declare const MCP_ENTRY: string;
export declare const STDIO_BUNDLE_CACHE: string;
