/**
 * The page script's DOM helpers. Every piece of agent content goes into the page as text (`textContent`, text
 * nodes), never as markup; bidi and other invisible control characters are shown as `⟦U+202E⟧` so a line cannot
 * pretend to say what it does not.
 */

/** An attribute's value for {@link h}: null, undefined and false leave it out; an `on…` key takes a listener. */
export type AttrValue = string | number | boolean | null | undefined | ((event: Event) => void);
/** What {@link add} appends: a node, or a value shown as text; null, undefined and false add nothing. */
export type Child = Node | string | number | null | undefined | false;

const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F\u200B-\u200F\u202A-\u202E\u2060-\u2069\uFEFF]/g;

/** A value as text, its invisible control characters made visible. */
export function shown(value: unknown): string {
  if (value === null || value === undefined) return '';
  return String(value).replace(
    CONTROL,
    (c) => `\u27E6U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}\u27E7`,
  );
}

/** An element with attributes (a relative `href` only) and children inserted as text or nodes. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs?: Record<string, AttrValue> | null,
  children?: Child | Child[],
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (attrs)
    for (const k in attrs) {
      const v = attrs[k];
      if (v === null || v === undefined || v === false) continue;
      if (k === 'onclick' || k === 'onchange' || k === 'oninput') {
        if (typeof v === 'function') el.addEventListener(k.slice(2), v);
      } else if (k === 'href') {
        if (safeHref(v)) el.setAttribute('href', v);
      } else el.setAttribute(k, v === true ? '' : String(v));
    }
  add(el, children);
  return el;
}

/** Appends children to an element: nodes as they are, anything else as text. */
export function add<E extends Node>(el: E, children?: Child | Child[]): E {
  if (children === null || children === undefined) return el;
  const list = Array.isArray(children) ? children : [children];
  for (const c of list) {
    if (c === null || c === undefined || c === false) continue;
    if (typeof c === 'object' && c.nodeType) el.appendChild(c);
    else el.appendChild(document.createTextNode(shown(c)));
  }
  return el;
}

/** A link the page may follow: relative only (no scheme, no `//host`). */
function safeHref(v: unknown): v is string {
  return typeof v === 'string' && !/^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(v) && v.indexOf('//') !== 0;
}

const SHOW_FIRST = 65536;
/** A text block; a long one shows its first 64 KiB and a button that shows the rest (layout stays quick). */
export function pre(value: unknown, testid?: string): HTMLElement {
  const p = h('pre', { 'data-testid': testid || null });
  const text = String(value);
  if (text.length <= SHOW_FIRST) {
    p.textContent = shown(text);
    return p;
  }
  p.textContent = shown(text.slice(0, SHOW_FIRST));
  const more = h(
    'button',
    {
      class: 'btn',
      'data-testid': 'show-all',
      onclick: () => {
        p.textContent = shown(text);
        more.remove();
      },
    },
    `show all ${text.length} characters`,
  );
  return h('div', null, [p, more]);
}

/** Removes an element's children. */
export function clear(el: Node): void {
  while (el.firstChild) el.removeChild(el.firstChild);
}

/** The CSS class of a state (`state-passed`). */
export function stateClass(s: string | null | undefined): string {
  return `state-${String(s || 'unknown').replace(/[^a-z_]/g, '')}`;
}

/** Milliseconds as `850 ms` or `1.2 s`; empty for none. */
export function ms(n: number | null | undefined): string {
  return n === null || n === undefined ? '' : n < 1000 ? `${Math.round(n)} ms` : `${(n / 1000).toFixed(1)} s`;
}
