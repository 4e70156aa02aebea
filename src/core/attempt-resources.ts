/**
 * What an attempt holds outside its run directory and must give back whatever happens: its model server, its
 * namespaces, the engine config keys and trust entry it set, its TMPDIR. Each step adds what it took; the release
 * runs every release at once (they are independent), never rejects, and runs once.
 */
export class AttemptResources {
  private readonly releases: Array<() => Promise<unknown> | unknown> = [];
  private released: Promise<void> | null = null;

  /** Adds something to give back. A release that fails is ignored: the next attempt's or command's checks reclaim it. */
  add(release: () => Promise<unknown> | unknown): void {
    if (this.released)
      void Promise.resolve()
        .then(release)
        .catch(() => undefined);
    else this.releases.push(release);
  }

  /** Gives everything back, at once; the same promise on every call. */
  release(): Promise<void> {
    this.released ??= Promise.all(
      this.releases.map((release) =>
        Promise.resolve()
          .then(release)
          .catch(() => undefined),
      ),
    ).then(() => undefined);
    return this.released;
  }
}
