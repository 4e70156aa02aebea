/**
 * The command lines the docs show run in CI: every `agent-harness` command in README.md and docs/*.md is checked
 * against the real CLI's commander program, so a documented subcommand or flag the CLI does not know fails here.
 *
 * What is selected, in fenced code blocks only:
 * - Command lines: blocks tagged `sh`, `bash`, `shell` or `console`. A line continued with `\` is joined; it is split
 *   at `&&`, `||`, `;` and `|`; a `# comment`, leading `VAR=value` assignments and a leading `$ ` are dropped; a
 *   command that then starts with `agent-harness` or `npx agent-harness` is parsed up to its first redirection by
 *   the program `buildProgram` makes, with every action replaced by a no-op: an unknown command or option, a missing
 *   argument or a bad option value fails, as it would for a user. Placeholders (`<handle>`) are plain arguments.
 * - Synopses: untagged blocks (docs/cli.md's usage list). A line starting with `agent-harness` names a command (its
 *   leading words that are subcommand names) and options in `[--flag V]` form: each `--flag` must be an option of that
 *   command (or, for the engine and `start` forms, of the program).
 */
import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { type Command, CommanderError } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/main.js';
import { REPO } from '../helpers/cli.js';

interface DocLine {
  file: string;
  line: number;
  text: string;
}

const SHELL_TAGS = new Set(['sh', 'bash', 'shell', 'console']);

/** Every fenced block of the docs: its file, tag and lines (with their line numbers). */
function codeBlocks(): Array<{ file: string; tag: string; lines: DocLine[] }> {
  const files = ['README.md', ...fs.readdirSync(path.join(REPO, 'docs')).map((name) => path.join('docs', name))]
    .filter((file) => file.endsWith('.md'))
    .sort();
  const blocks: Array<{ file: string; tag: string; lines: DocLine[] }> = [];
  for (const file of files) {
    const rows = fs.readFileSync(path.join(REPO, file), 'utf8').split('\n');
    let open: { tag: string; lines: DocLine[] } | null = null;
    rows.forEach((row, index) => {
      const fence = /^\s*```(\S*)/.exec(row);
      if (fence && !open) open = { tag: fence[1] ?? '', lines: [] };
      else if (fence && open) {
        blocks.push({ file, ...open });
        open = null;
      } else if (open) open.lines.push({ file, line: index + 1, text: row });
    });
  }
  return blocks;
}

/**
 * Shell words of `text` (quotes removed), up to a `#` comment; `null` marks an operator (`&&`, `|`), `'>'` a
 * redirection. A placeholder such as `<handle>` is a word, not a redirection.
 */
function shellWords(text: string): Array<string | null> {
  const words: Array<string | null> = [];
  const pattern =
    /\s*(?:(#.*)|(&&|\|\||[;|]|\d?>>?|<(?![A-Za-z][\w.-]*>))|((?:<[A-Za-z][\w.-]*>|'[^']*'|"(?:\\.|[^"\\])*"|\\.|[^\s;|&<>'"#])+))/y;
  for (let match = pattern.exec(text); match && match[0].trim() !== ''; match = pattern.exec(text)) {
    if (match[1] !== undefined) break;
    if (match[2] !== undefined) words.push(match[2].includes('>') || match[2] === '<' ? '>' : null);
    else
      words.push(
        match[3]!.replace(/'([^']*)'|"((?:\\.|[^"\\])*)"|\\(.)/g, (_, single, double, escaped) =>
          single !== undefined ? single : double !== undefined ? double.replace(/\\(.)/g, '$1') : escaped,
        ),
      );
  }
  return words;
}

/** The `agent-harness` command lines of the shell blocks, as argument lists (without `agent-harness`). */
function documentedCommands(): Array<DocLine & { args: string[] }> {
  const commands: Array<DocLine & { args: string[] }> = [];
  for (const block of codeBlocks().filter((b) => SHELL_TAGS.has(b.tag))) {
    for (let i = 0; i < block.lines.length; i += 1) {
      const first = block.lines[i]!;
      let text = first.text.replace(/^\s*\$ /, '');
      while (text.endsWith('\\') && i + 1 < block.lines.length) text = `${text.slice(0, -1)} ${block.lines[++i]!.text}`;
      const words = shellWords(text);
      // Split into commands at operators; a redirection ends the current one's arguments.
      let current: string[] = [];
      let redirected = false;
      const flush = () => {
        const start = current.findIndex((word) => !/^[A-Za-z_][A-Za-z0-9_]*=/.test(word));
        const rest = start < 0 ? [] : current.slice(start);
        if (rest[0] === 'npx') rest.shift();
        if (rest[0] === 'agent-harness') commands.push({ ...first, text, args: rest.slice(1) });
        current = [];
        redirected = false;
      };
      for (const word of words) {
        if (word === null) flush();
        else if (word === '>') redirected = true;
        else if (!redirected) current.push(word);
      }
      flush();
    }
  }
  return commands;
}

/** The synopsis lines of untagged blocks. */
function documentedSynopses(): DocLine[] {
  return codeBlocks()
    .filter((b) => b.tag === '')
    .flatMap((b) => b.lines.filter((l) => /^agent-harness\b/.test(l.text)));
}

const sink = (): Writable => new Writable({ write: (_chunk, _encoding, done) => done() });

/** The real program with every action a no-op: parsing it validates a command line and runs nothing. */
function dryProgram(): Command {
  const program = buildProgram({ stdout: sink(), stderr: sink() }, () => undefined);
  const visit = (command: Command): void => {
    command.action(() => undefined);
    for (const sub of command.commands) visit(sub);
  };
  for (const sub of program.commands) visit(sub);
  return program;
}

/** Parses `args` as the CLI would, running no action; resolves null, or the error the CLI would report. */
async function validate(args: readonly string[]): Promise<string | null> {
  try {
    await dryProgram().parseAsync([...args], { from: 'user' });
    return null;
  } catch (error) {
    if (error instanceof CommanderError && ['commander.helpDisplayed', 'commander.version'].includes(error.code))
      return null;
    return (error as Error).message;
  }
}

/** The command a synopsis names (its leading subcommand words) and the `--flags` it shows that command lacks. */
function unknownSynopsisFlags(text: string): { command: string; unknown: string[] } {
  const program = dryProgram();
  const words = text.split(/\s+/).slice(1);
  let command = program;
  for (const word of words) {
    const sub = command.commands.find((c) => c.name() === word);
    if (!sub) break;
    command = sub;
  }
  const known = new Set(
    [command, ...(command === program || command.name() === 'start' ? [program] : [])].flatMap((c) =>
      c.options.flatMap((o) => [o.long, o.short]).filter(Boolean),
    ),
  );
  const flags = [...text.matchAll(/(?<![\w-])(--?[a-z][a-z0-9-]*)/g)].map((m) => m[1]!);
  return { command: command.name(), unknown: flags.filter((flag) => !known.has(flag) && flag !== '--help') };
}

describe("the docs' command lines", () => {
  const commands = documentedCommands();
  const synopses = documentedSynopses();

  it('finds the command lines and synopses (the selection above is not empty)', () => {
    // README's quick start and command list, acp.md, cassettes.md, export.md; cli.md's usage list.
    expect(commands.length).toBeGreaterThanOrEqual(15);
    expect(synopses.length).toBeGreaterThanOrEqual(10);
    expect(commands.map((c) => c.args[0])).toEqual(expect.arrayContaining(['demo', 'start', 'resume', 'runs']));
  });

  it('a command line the CLI would refuse fails the check (so the checks below can fail)', async () => {
    expect(await validate(['start', '--no-such-flag', '--prompt', 'x', 'codex'])).toMatch(/unknown option/);
    expect(await validate(['no-such-command'])).not.toBeNull();
    expect(await validate(['model', 'serve', '--port', 'P'])).toMatch(/--port takes a port number/);
    expect(await validate(['runs', '--last', '3'])).toBeNull();
    expect(unknownSynopsisFlags('agent-harness runs [--json] [--no-such-flag]').unknown).toEqual(['--no-such-flag']);
  });

  it.each(commands.map((c) => [`${c.file}:${c.line}`, c] as const))('parses %s', async (_where, { args, text }) => {
    expect(await validate(args), text).toBeNull();
  });

  it.each(synopses.map((s) => [`${s.file}:${s.line}`, s] as const))(
    'knows every flag of the synopsis %s',
    (_where, { text }) => {
      expect(unknownSynopsisFlags(text).unknown, text).toEqual([]);
    },
  );
});
