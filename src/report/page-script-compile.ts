/**
 * Compiles the page script from its TypeScript sources (src/report/browser/, type-checked with the DOM lib by
 * tsconfig.browser.json) into the one classic script the page inlines: each file's types stripped by TypeScript's
 * `transpileModule`, its imports (of its siblings) and `export` keywords removed, and the files joined in
 * {@link PAGE_SCRIPT_FILES} order inside one function scope, after the values the server defines for it. Joining
 * is sound because the files' top-level names must all differ (checked here: one scope at run time, where tsc saw
 * modules), and their only imports are of each other. No bundler: the page needs no module loader, and the same
 * compile runs in the build (scripts/build.mjs) and from the sources (html-page-script.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import type TS from 'typescript';
import { AgentHarnessError } from '../errors/index.js';
import { ACP_CONFORMANCE_COLUMNS } from './acp-conformance.js';

/** The browser sources, in the order their top-level statements run: main.ts, which renders the page, last. */
export const PAGE_SCRIPT_FILES = [
  'page-data.ts',
  'dom.ts',
  'data.ts',
  'runs.ts',
  'attempt.ts',
  'compare.ts',
  'diff.ts',
  'main.ts',
] as const;

/** Values the server defines ahead of the script (declared, not defined, in the sources: compare.ts). */
const PAGE_SCRIPT_DEFINES: Record<string, unknown> = { ACP_COLUMNS: ACP_CONFORMANCE_COLUMNS };

/** One browser source file: its name in src/report/browser/ and its text. */
export interface BrowserSource {
  name: string;
  text: string;
}

/** The browser sources on disk (src/report/browser/): the folder's .ts files, in {@link PAGE_SCRIPT_FILES} order. */
export function readBrowserSources(dir: string): BrowserSource[] {
  const onDisk = fs.readdirSync(dir).filter((name) => name.endsWith('.ts') && !name.endsWith('.d.ts'));
  const listed: readonly string[] = PAGE_SCRIPT_FILES;
  // A file on disk that is not listed comes last, so the compile names it (rather than leaving it out unseen).
  const names = [...listed.filter((name) => onDisk.includes(name)), ...onDisk.filter((name) => !listed.includes(name))];
  return names.map((name) => ({ name, text: fs.readFileSync(path.join(dir, name), 'utf8') }));
}

/** The page script: the sources compiled and joined in one function scope (see the module's comment). */
export function compilePageScript(ts: typeof TS, sources: readonly BrowserSource[]): string {
  const names = sources.map((s) => s.name);
  if (names.join() !== PAGE_SCRIPT_FILES.join())
    throw new AgentHarnessError(
      'INTERNAL_ERROR',
      `The page script's sources are ${names.join(', ')}; expected ${PAGE_SCRIPT_FILES.join(', ')}: a new browser file goes into PAGE_SCRIPT_FILES (src/report/page-script-compile.ts), in the order it must run.`,
    );
  const declared = new Map<string, string>(Object.keys(PAGE_SCRIPT_DEFINES).map((name) => [name, 'the server']));
  const defines = Object.entries(PAGE_SCRIPT_DEFINES).map(
    ([name, value]) => `const ${name} = ${JSON.stringify(value)};\n`,
  );
  const bodies = sources.map((source) => {
    const out = ts.transpileModule(source.text, {
      fileName: source.name,
      compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext, removeComments: true },
      transformers: { after: [() => (file) => toScript(ts, file, source.name, declared)] },
    });
    return out.outputText.trim();
  });
  return `(function () {\n'use strict';\n${defines.join('')}${bodies.filter(Boolean).join('\n')}\n})();\n`;
}

/**
 * A compiled module as a script to join: imports of siblings and `export` keywords dropped, each top-level name
 * recorded in `declared` (a name two files declare would be one variable once joined).
 */
function toScript(ts: typeof TS, file: TS.SourceFile, name: string, declared: Map<string, string>): TS.SourceFile {
  const fail = (what: string): never => {
    throw new AgentHarnessError('INTERNAL_ERROR', `src/report/browser/${name}: ${what}.`);
  };
  const declare = (id: string): void => {
    const other = declared.get(id);
    if (other !== undefined)
      fail(`declares ${id} at its top level, as ${other} does; the page script's files share one scope: rename one`);
    declared.set(id, name);
  };
  const statements: TS.Statement[] = [];
  for (const statement of file.statements) {
    if (ts.isImportDeclaration(statement)) {
      const from = (statement.moduleSpecifier as TS.StringLiteral).text;
      if (!/^\.\/[\w-]+\.js$/.test(from))
        fail(
          `imports ${from}; the page script can import only its sibling files (values the server gives are defines)`,
        );
      continue;
    }
    if (ts.isExportDeclaration(statement) || ts.isExportAssignment(statement)) {
      // `export {};`, which TypeScript writes for a module left with no import or export (page-data.ts, all types).
      if (
        ts.isExportDeclaration(statement) &&
        !statement.moduleSpecifier &&
        statement.exportClause &&
        ts.isNamedExports(statement.exportClause) &&
        statement.exportClause.elements.length === 0
      )
        continue;
      fail('has an export list or default export; export declarations only (`export function`, `export const`)');
    }
    if (ts.isFunctionDeclaration(statement) || ts.isClassDeclaration(statement)) {
      if (!statement.name) fail('has an unnamed function or class at its top level');
      declare(statement.name!.text);
    } else if (ts.isVariableStatement(statement))
      for (const d of statement.declarationList.declarations) {
        if (!ts.isIdentifier(d.name)) fail('destructures at its top level; declare each name on its own');
        declare((d.name as TS.Identifier).text);
      }
    statements.push(withoutExport(ts, statement));
  }
  return ts.factory.updateSourceFile(file, statements);
}

/** A statement without its `export` keyword. */
function withoutExport(ts: typeof TS, statement: TS.Statement): TS.Statement {
  if (!ts.canHaveModifiers(statement)) return statement;
  const modifiers = ts.getModifiers(statement);
  if (!modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)) return statement;
  const kept = modifiers.filter((m) => m.kind !== ts.SyntaxKind.ExportKeyword);
  return ts.factory.replaceModifiers(statement, kept) as TS.Statement;
}
