/** Containment of absolute, normalized paths (resolved by the caller), compared as strings. */

/** Whether `child` is `parent` or under it. */
export function isWithin(child: string, parent: string): boolean {
  return child === parent || child.startsWith(parent === '/' ? '/' : `${parent}/`);
}
