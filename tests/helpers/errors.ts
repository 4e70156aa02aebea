/** Test helpers: what a function throws (or a promise rejects with), or null. */
export function thrownBy(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  return null;
}

/** What a promise rejects with, or null when it resolves. */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => null,
    (error: unknown) => error,
  );
}

/** Asserts that `fn` throws an AgentHarnessError with `code` whose message matches `message`. */
export function expectHarnessError(fn: () => unknown, code: string, message: RegExp): void {
  const error = thrownBy(fn) as { code?: unknown; message?: unknown } | null;
  if (!error || error.code !== code || typeof error.message !== 'string' || !message.test(error.message))
    throw new Error(
      `expected an AgentHarnessError ${code} matching ${message}, got ${error ? `${String(error.code)}: ${String(error.message)}` : 'no error'}`,
    );
}
