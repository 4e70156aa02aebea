/** The HTML report's stylesheet (inlined; the page's CSP allows inline styles only). */
export const PAGE_STYLE = `
:root { --fg: #1d2330; --muted: #667085; --line: #d8dde6; --bg: #fff; --soft: #f5f7fa; --ok: #1a7f37; --bad: #c4302b;
  --warn: #9a6700; --accent: #2f5fd0; font-family: system-ui, sans-serif; font-size: 14px; color: var(--fg); }
body { margin: 0; background: var(--bg); }
header { padding: 12px 20px; border-bottom: 1px solid var(--line); display: flex; gap: 16px; align-items: baseline; flex-wrap: wrap; }
header h1 { font-size: 18px; margin: 0; }
.muted { color: var(--muted); }
nav { display: flex; gap: 4px; padding: 8px 20px; border-bottom: 1px solid var(--line); background: var(--soft); }
nav button, .btn { border: 1px solid var(--line); background: var(--bg); padding: 4px 10px; border-radius: 4px; cursor: pointer; font: inherit; }
nav button.on, .btn.on { background: var(--accent); color: #fff; border-color: var(--accent); }
main { padding: 12px 20px 40px; }
table { border-collapse: collapse; width: 100%; margin: 8px 0 16px; }
th, td { border-bottom: 1px solid var(--line); padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: var(--soft); font-weight: 600; }
tr.click { cursor: pointer; }
tr.click:hover { background: #eef3ff; }
.filters { display: flex; gap: 8px; flex-wrap: wrap; align-items: center; margin: 8px 0; }
.filters label { display: flex; gap: 4px; align-items: center; }
.state-completed, .state-passed, .same { color: var(--ok); }
.state-failed, .state-interrupted, .differ { color: var(--bad); }
.state-awaiting_input, .state-no_session, .state-unknown, .state-running, .state-skipped { color: var(--warn); }
.assertion { color: var(--bad); font-size: 12px; max-width: 40em; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.test-result { border-left: 3px solid var(--line); padding: 0 10px; margin: 8px 0; }
pre { background: var(--soft); border: 1px solid var(--line); padding: 6px 8px; overflow: auto; max-height: 360px;
  white-space: pre-wrap; word-break: break-word; margin: 4px 0; }
.timeline { list-style: none; padding: 0; margin: 0; }
.timeline li { border-left: 3px solid var(--line); padding: 4px 10px; margin: 4px 0; }
.timeline li.k-message { border-color: var(--accent); }
.timeline li.k-reasoning { border-color: #8e6bd8; }
.timeline li.k-tool { border-color: #3d8b8b; }
.timeline li.k-diagnostic, .timeline li.k-error { border-color: var(--warn); }
.timeline li.k-model { border-color: #b0b7c3; color: var(--muted); }
.timeline li.hidden { display: none; }
.badge { display: inline-block; padding: 0 6px; border-radius: 3px; background: var(--soft); border: 1px solid var(--line);
  font-size: 12px; margin-right: 6px; }
.ctl { color: var(--bad); font-weight: 600; }
h2 { font-size: 16px; margin: 18px 0 6px; }
h3 { font-size: 14px; margin: 14px 0 4px; }
.cols { display: grid; grid-template-columns: 1fr 1fr; gap: 12px; }
.row-only-left td:first-child, .row-only-right td:last-child { background: #fff3f0; }
.row-same td { color: var(--muted); }
code { background: var(--soft); padding: 0 3px; }
`;
