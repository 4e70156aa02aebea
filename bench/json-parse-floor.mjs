// The floor of the translate figure: a fresh Node process that reads a JSONL file in 1 MiB chunks, splits it into
// lines and runs JSON.parse on each, nothing else (no parser, no RASP, no FCMP, no output). What translate can cost
// at the least with Node's own JSON.parse; bench/translate.ts runs it beside `translate --summary` on the same file.
// Plain JavaScript, Node's modules only, so its start-up is bare Node's.
//   node bench/json-parse-floor.mjs FILE   prints the number of lines parsed
import fs from 'node:fs';
import { StringDecoder } from 'node:string_decoder';

const fd = fs.openSync(process.argv[2], 'r');
const buffer = Buffer.allocUnsafe(1 << 20);
const decoder = new StringDecoder('utf8');
let rest = '';
let lines = 0;
for (;;) {
  const got = fs.readSync(fd, buffer, 0, buffer.length, null);
  if (got === 0) break;
  const text = rest + decoder.write(buffer.subarray(0, got));
  let start = 0;
  for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', start)) {
    if (nl > start) {
      JSON.parse(text.slice(start, nl));
      lines += 1;
    }
    start = nl + 1;
  }
  rest = text.slice(start);
}
if (rest.trim() !== '') {
  JSON.parse(rest);
  lines += 1;
}
fs.closeSync(fd);
console.log(String(lines));
