/**
 * Measures the size of the rooms of `src/`: each file's bytes and each function's line span, with the TypeScript
 * compiler's own parser (tests/contract/house-size.contract.test.ts holds them to the limits of docs/architecture.md).
 */
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/** A function-like node of a source file and its extent. */
export interface MeasuredFunction {
  /** `file#name`: file relative to the repository, name the function's (or its variable's, property's, class's). */
  key: string;
  lines: number;
}

/** The `.ts` files under `dir`, relative to `root`, in sorted order. */
export function sourceFiles(root: string, dir: string): string[] {
  const found: string[] = [];
  const walk = (at: string): void => {
    for (const entry of fs.readdirSync(at, { withFileTypes: true })) {
      const full = path.join(at, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.ts')) found.push(path.relative(root, full).split(path.sep).join('/'));
    }
  };
  walk(path.join(root, dir));
  return found.sort();
}

/** The name a function is known by: its own, else the variable, property or class member it is assigned to. */
function nameOf(node: ts.Node, source: ts.SourceFile): string {
  const named = node as ts.Node & { name?: ts.Node };
  const own = named.name && (ts.isIdentifier(named.name) || ts.isStringLiteral(named.name)) ? named.name.text : null;
  const parent = node.parent;
  const outer =
    parent && (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent))
      ? parent.name.getText(source)
      : null;
  const owner = ts.isClassLike(parent) && parent.name ? `${parent.name.text}.` : '';
  if (ts.isConstructorDeclaration(node)) return `${owner}constructor`;
  const name = own ?? outer;
  if (name) return `${owner}${name}`;
  return `<anonymous:${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1}>`;
}

/** Every function-like node of `file` (nested ones too) with its span in lines, first line to last. */
export function measureFunctions(root: string, file: string): MeasuredFunction[] {
  const text = fs.readFileSync(path.join(root, file), 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const measured: MeasuredFunction[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      measured.push({ key: `${file}#${nameOf(node, source)}`, lines: last - first + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return measured;
}

/**
 * The allow-list of docs/architecture.md: the rows of its table under "## Rooms that fit in a hand" whose first cell
 * is a code span, `file` (a file over the size limit) or `file#function` (a function over the line limit).
 */
export function allowList(root: string): Set<string> {
  const doc = fs.readFileSync(path.join(root, 'docs/architecture.md'), 'utf8');
  const start = doc.indexOf('## Rooms that fit in a hand');
  if (start < 0) return new Set();
  const end = doc.indexOf('\n## ', start + 1);
  const section = doc.slice(start, end < 0 ? undefined : end);
  const allowed = new Set<string>();
  for (const line of section.split('\n')) {
    const row = /^\|\s*`([^`]+)`\s*\|/.exec(line);
    if (row?.[1]) allowed.add(row[1]);
  }
  return allowed;
}
