/**
 * Optional peer dependencies (the vendor SDKs, OpenTelemetry, the ACP SDK) are imported on first use, never by a
 * package entry: `agent-harness` installs and loads without them, and the one feature that needs a missing one fails
 * with DEPENDENCY_MISSING naming the package, what needs it and the command that installs it.
 */
import { AgentHarnessError } from '../errors/index.js';

/** One optional peer: its package name(s), for what, and how to import it. */
export interface OptionalPeer<T> {
  /** The packages the import needs (the first is named in the message when the error does not say which). */
  packages: readonly string[];
  /** What needs them, for the message ("the HTTP caller", "the OTLP export"). */
  neededBy: string;
  load: () => Promise<T>;
}

const loading = new Map<string, Promise<unknown>>();

/** The package a failed import names (`Cannot find package 'x'`), else the first of `packages`. */
function missingPackageOf(cause: unknown, packages: readonly string[]): string {
  const message = cause instanceof Error ? cause.message : String(cause);
  return packages.find((name) => message.includes(`'${name}'`) || message.includes(`"${name}"`)) ?? packages[0]!;
}

/** Imports `peer` once per process; a failed import is DEPENDENCY_MISSING and is tried again on the next call. */
export function loadOptionalPeer<T>(peer: OptionalPeer<T>): Promise<T> {
  const key = peer.packages.join(' ');
  let pending = loading.get(key) as Promise<T> | undefined;
  if (!pending) {
    pending = peer.load().catch((cause: unknown) => {
      loading.delete(key);
      const reason = cause instanceof Error ? cause.message : String(cause);
      const install = `npm install ${peer.packages.join(' ')}`;
      throw new AgentHarnessError(
        'DEPENDENCY_MISSING',
        `The optional peer dependency ${missingPackageOf(cause, peer.packages)} could not be loaded (${reason}); ${peer.neededBy} needs it. Install it in your project: ${install}`,
        { cause, details: { package: missingPackageOf(cause, peer.packages), install } },
      );
    });
    loading.set(key, pending);
  }
  return pending;
}
