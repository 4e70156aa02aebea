/** Types of bin/bundle-loader.js (the command's bundle loader with its V8 code cache), for the tests. */

/** Environment variable: `off` disables the code cache; a directory puts it there instead of beside the bundle. */
export declare const COMPILE_CACHE_ENV: 'AGENT_HARNESS_COMPILE_CACHE';

/** The cache's name for a command line: its command word, and for `start` the engine. */
export declare function cacheKey(args: readonly string[]): string;

/** Where the cache goes (null: off). */
export declare function cacheDirFor(bundleFile: string, env?: NodeJS.ProcessEnv): string | null;

/** What became of the code cache when the bundle was loaded. */
export type CacheState = 'none' | 'accepted' | 'rejected' | 'off';

/** Runs the CommonJS bundle `file`; `saveCache()` (never throws) writes the cache where none was accepted. */
export declare function loadBundle(file: string, options: { cacheDir: string | null; key: string }): {
  exports: Record<string, unknown>;
  cache: CacheState;
  saveCache(): void;
};
