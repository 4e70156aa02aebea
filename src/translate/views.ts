/**
 * Translate views 1–3 as pure string renderers (view 0 is the raw stream, passed through by the caller):
 * 1 = RASP as JSON lines without `raw.line` events, 2 = FCMP as JSON lines, 3 = a simulated frontend in
 * Markdown. Every rendering ends with a newline unless it is empty.
 */
import type { FcmpEvent, RaspEvent } from '../protocol/index.js';

/** Heading of view 3. */
export const MARKDOWN_VIEW_HEADING = '### Simulated Frontend View (Markdown)';

/** View 1: one JSON line per RASP event, raw lines left out (view 0 shows them). */
export function renderRaspView(events: readonly RaspEvent[]): string {
  return jsonLines(events.filter((event) => event.data.type !== 'raw.line'));
}

/** View 2: one JSON line per FCMP event. */
export function renderFcmpView(events: readonly FcmpEvent[]): string {
  return jsonLines(events);
}

/** View 3: the conversation as a frontend would show it, one Markdown list item per visible event. */
export function renderMarkdownView(events: readonly FcmpEvent[]): string {
  const items = events.flatMap((event) => {
    const line = markdownItem(event);
    return line === null ? [] : [line];
  });
  return `${[MARKDOWN_VIEW_HEADING, '', ...items].join('\n')}\n`;
}

/** Renders view 1, 2 or 3 of an attempt. */
export function renderTranslateView(
  mode: 1 | 2 | 3,
  events: { rasp: readonly RaspEvent[]; fcmp: readonly FcmpEvent[] },
): string {
  if (mode === 1) return renderRaspView(events.rasp);
  if (mode === 2) return renderFcmpView(events.fcmp);
  return renderMarkdownView(events.fcmp);
}

/** The view 3 list item of one FCMP event, or null for an event the frontend does not show. */
export function markdownItem(event: FcmpEvent): string | null {
  switch (event.type) {
    case 'assistant.message.final':
      return listItem('Assistant', event.data.text);
    case 'user.input.replied':
      return listItem('User', event.data.text);
    case 'user.input.required':
      return listItem('System', 'waiting for user input');
    case 'conversation.completed':
      return listItem('System', `conversation completed (${event.data.reason})`);
    case 'conversation.failed':
      return listItem(
        'System',
        `conversation failed [${event.data.category}/${event.data.code}]: ${event.data.message}`,
      );
    case 'diagnostic.warning':
      return listItem('System', `warning ${event.data.code}: ${event.data.message}`);
    case 'tool.call':
      return listItem(
        'Tool call',
        `${event.data.kind} ${event.data.name}: ${event.data.command ?? event.data.input_excerpt ?? ''}`,
      );
    case 'tool.result': {
      const code = event.data.exit_code === null ? '' : `, exit ${event.data.exit_code}`;
      const output = (event.data.output_excerpt ?? '').split('\n').slice(0, 8).join('\n').trimEnd();
      return listItem('Tool result', `${event.data.status}${code}${output ? `\n${output}` : ''}`);
    }
    default:
      return null;
  }
}

/** Continuation lines are indented by two spaces so they stay inside the list item. */
function listItem(who: string, text: string): string {
  const [first = '', ...rest] = text.replace(/\r\n?/g, '\n').split('\n');
  return [`- ${who}: ${first}`, ...rest.map((line) => (line === '' ? '' : `  ${line}`))].join('\n');
}

function jsonLines(values: readonly unknown[]): string {
  return values.map((value) => `${JSON.stringify(value)}\n`).join('');
}
