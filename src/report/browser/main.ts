/**
 * The page script's start, last of its files (the others only declare): Escape closes a run, a `#run=<handle>`
 * link (the Trials section's failed trials) opens one, and the page renders.
 */
import { stopTail } from './attempt.js';
import { app, lastAttempt, runByHandle, state } from './data.js';
import { render } from './runs.js';

window.addEventListener('keydown', (e) => {
  if (e.key === 'Escape' && state.run) {
    state.run = null;
    stopTail();
    render();
  }
});

/** Opens the run a `#run=<handle>` link names. */
function openHashRun(): void {
  const m = /^#run=(.+)$/.exec(location.hash);
  if (!m) return;
  const run = runByHandle(decodeURIComponent(m[1]));
  const last = run ? lastAttempt(run) : null;
  state.tab = 'runs';
  state.run = run ? run.handle : null;
  state.attempt = last ? last.attempt : null;
  stopTail();
  render();
  app.scrollIntoView();
}
window.addEventListener('hashchange', openHashRun);
render();
openHashRun();
