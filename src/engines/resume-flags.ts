/**
 * Start flags that carry over to a resume. A run started with `codex exec -m gpt-5.4 …` or `gemini
 * --output-format json …` must resume with the same model and output format, not with the default resume
 * command. Each engine lists, in its `command.ts`, the flags of its start command that its resume command
 * accepts too; everything else of the start argv (the prompt, start-only flags) is dropped, and the audit says
 * which was which.
 */

/** One flag (with its aliases) that a resume accepts; `value` when it takes an argument. */
export interface ResumeFlag {
  names: readonly string[];
  value: boolean;
}

/** The start flags split into those a resume gets and those it does not. */
export interface CarriedFlags {
  /** Tokens appended to the resume argv, in start order (`['-m', 'gpt-5.4']`). */
  carried: string[];
  /** Start flags the resume command does not take (`['--oss']`); positionals (the prompt) are not listed. */
  dropped: string[];
}

function specOf(token: string, table: readonly ResumeFlag[]): { spec: ResumeFlag; inline: boolean } | null {
  const name = token.startsWith('--') && token.includes('=') ? token.slice(0, token.indexOf('=')) : token;
  const spec = table.find((flag) => flag.names.includes(name));
  return spec ? { spec, inline: name !== token } : null;
}

/** Splits a start argv into carried and dropped flags. */
export function carryResumeFlags(startArgs: readonly string[], table: readonly ResumeFlag[]): CarriedFlags {
  const carried: string[] = [];
  const dropped: string[] = [];
  for (let i = 0; i < startArgs.length; i += 1) {
    const token = startArgs[i]!;
    if (token === '--') break;
    if (!token.startsWith('-') || token === '-') continue;
    const match = specOf(token, table);
    if (!match) {
      dropped.push(token);
      continue;
    }
    carried.push(token);
    if (match.spec.value && !match.inline && i + 1 < startArgs.length) {
      i += 1;
      carried.push(startArgs[i]!);
    }
  }
  return { carried, dropped };
}

/**
 * The default resume argv with the carried flags: a default flag that the start also set (by any alias) is
 * replaced by the start's value; the carried flags go last, where every engine's parser takes options.
 */
export function withCarriedFlags(
  resumeArgs: readonly string[],
  carried: readonly string[],
  table: readonly ResumeFlag[],
): string[] {
  if (carried.length === 0) return [...resumeArgs];
  const overridden = new Set<ResumeFlag>();
  for (const token of carried) {
    const match = token.startsWith('-') ? specOf(token, table) : null;
    if (match) overridden.add(match.spec);
  }
  const out: string[] = [];
  for (let i = 0; i < resumeArgs.length; i += 1) {
    const token = resumeArgs[i]!;
    const match = token.startsWith('-') ? specOf(token, table) : null;
    if (match && overridden.has(match.spec)) {
      if (match.spec.value && !match.inline) i += 1;
      continue;
    }
    out.push(token);
  }
  return [...out, ...carried];
}
