/**
 * `npm run blind-kill -- [--configuration ID] [--only NAME[,NAME]] [--out FILE] MODULE EXPORT [MODULE EXPORT ...]`:
 * the kill rate of faulty variants written blind (fixtures/blind.ts), measured with the suite as it is. Each MODULE
 * (a path from the repository root) exports EXPORT, an array of BlindVariant or a function that makes one; each
 * variant is run alone: its service's reference deployment (the reference configuration ID, default `default`)
 * with that one modifier, the whole suite of that service through the real command. A variant is caught when a
 * check failed or warned; the table says which checks did, and which verdict the run ended in.
 *
 * This is the measure taken before any check is changed for a new set of blind variants (the number a closing note
 * reports as "before"), and again after. It sends traffic only to the references it starts on loopback.
 */
import { parseArgs } from 'node:util';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { BlindVariant } from '../fixtures/blind.js';
import { startFeedReference } from '../fixtures/feed/reference.js';
import { keyEnv, startGatewayReference } from '../fixtures/gateway/reference.js';
import { REFERENCE_CONFIGURATIONS } from '../fixtures/variants.js';
import { limiter, runCli } from '../fixtures/run-cli.js';
import type { Modifier, Req, Reply } from '../fixtures/server-kit.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    configuration: { type: 'string', default: 'default' },
    only: { type: 'string' },
    out: { type: 'string' },
    parallel: { type: 'string', default: '2' },
  },
});
if (positionals.length < 2 || positionals.length % 2) {
  console.error('usage: npm run blind-kill -- [--configuration ID] [--only NAME,...] [--out FILE] MODULE EXPORT [MODULE EXPORT ...]');
  process.exit(2);
}
const configuration = REFERENCE_CONFIGURATIONS.find((c) => c.id === values.configuration);
if (!configuration) {
  console.error(`no reference configuration ${values.configuration}: ${REFERENCE_CONFIGURATIONS.map((c) => c.id).join(', ')}`);
  process.exit(2);
}

/** The variants to run, each with a way to make a fresh instance of it (its state empty) for its run. */
async function load(): Promise<{ v: BlindVariant; fresh: () => BlindVariant }[]> {
  const out: { v: BlindVariant; fresh: () => BlindVariant }[] = [];
  for (let i = 0; i < positionals.length; i += 2) {
    const mod = (await import(pathToFileURL(path.resolve(positionals[i]!)).href)) as Record<string, unknown>;
    const exported = mod[positionals[i + 1]!];
    const make = typeof exported === 'function' ? (exported as () => BlindVariant[]) : () => exported as BlindVariant[];
    const list = make();
    if (!Array.isArray(list)) throw new Error(`${positionals[i]} exports no variants as ${positionals[i + 1]}`);
    for (const v of list) out.push({ v, fresh: () => make().find((x) => x.name === v.name)! });
  }
  const only = values.only?.split(',');
  return only ? out.filter((e) => only.includes(e.v.name)) : out;
}

interface Row {
  name: string;
  service: string;
  sentence: string;
  caught: boolean;
  /** Requests and answers the variant changed in its run: 0 means it never departed from the reference there. */
  altered: number;
  verdict: string;
  exit: number | null;
  by: string[];
  seconds: number;
}

const reqText = (r: Req) => JSON.stringify([r.method, r.path, String(r.query), r.headers, r.body]);
const replyText = (r: Reply | undefined) => (r === undefined ? 'open' : JSON.stringify([r.status, r.headers, r.body]));

/**
 * A fresh instance of the variant (its state starts empty for each run), as a modifier of its service, counting the
 * requests and answers it changes: a variant that changed nothing in a run showed no defect there (its trigger never
 * came: data, a request or a moment the run did not have), which the table tells apart from one the suite missed.
 */
function counted(f: BlindVariant): { modifier: Modifier; altered: () => number } {
  let altered = 0;
  const note = (changed: boolean) => void (changed && altered++);
  const modifier: Modifier = {
    name: f.name,
    breaks: [],
    description: f.description,
    before:
      f.before &&
      ((req: Req) => {
        const was = reqText(req);
        const out = f.before!(req);
        note(reqText(out) !== was);
        return out;
      }),
    after:
      f.after &&
      ((req: Req, reply: Reply) => {
        const was = replyText(reply);
        const out = f.after!(req, reply);
        note(replyText(out) !== was);
        return out;
      }),
    handshake:
      f.handshake &&
      ((req: Req, reply: Reply | undefined) => {
        const was = replyText(reply);
        const out = f.handshake!(req, reply);
        note(replyText(out) !== was);
        return out;
      }),
  };
  return { modifier, altered: () => altered };
}

/** One variant, alone, over a fresh reference of its service. */
async function measure(v: BlindVariant, fresh: () => BlindVariant): Promise<Row> {
  const { modifier, altered } = counted(fresh());
  const env: Record<string, string> = { ...(configuration!.env ?? {}) };
  let args: string[];
  let close: () => Promise<void>;
  if (v.service === 'feed') {
    const feed = await startFeedReference({ options: configuration!.feed, modifiers: [modifier as Modifier<never>] });
    args = ['--service', 'feed', '--feed-url', feed.url];
    close = () => feed.close();
  } else {
    const gw = await startGatewayReference({ options: configuration!.gateway, modifiers: [modifier as Modifier<never>] });
    Object.assign(env, keyEnv(gw.keys));
    args = ['--service', 'gateway', '--gateway-url', gw.url];
    close = () => gw.close();
  }
  try {
    const run = await runCli([...args, '--no-html'], { env, timeoutMs: 300_000 });
    // A run's report directory (about 8 MB) is read here and then removed: a set of a few hundred variants left a
    // few gigabytes in the temporary directory.
    rmSync(run.reportDir, { recursive: true, force: true });
    const s = run.summary;
    const by = (s?.checks ?? []).filter((c) => c.verdict === 'failed' || c.verdict === 'warning').map((c) => `${c.verdict === 'warning' ? '~' : ''}${c.id}`);
    return {
      name: v.name,
      service: v.service,
      sentence: v.sentence,
      caught: by.length > 0,
      altered: altered(),
      verdict: s?.verdict ?? `no summary (exit ${run.code})`,
      exit: run.code,
      by,
      seconds: Math.round(run.durationMs / 100) / 10,
    };
  } finally {
    await close();
  }
}

const all = await load();
const gate = limiter(Number(values.parallel));
let done = 0;
const rows = await Promise.all(
  all.map(({ v, fresh }) =>
    gate(async () => {
      const row = await measure(v, fresh);
      console.error(
        `[${++done}/${all.length}] ${row.caught ? 'caught  ' : row.altered ? 'SURVIVED' : 'inert   '} ${row.name} (${row.verdict}, ${row.altered} changed, ${row.seconds} s)${row.caught ? `: ${row.by.join(', ')}` : ''}`,
      );
      return row;
    }),
  ),
);
const caught = rows.filter((r) => r.caught).length;
const byService = (s: string) => {
  const of = rows.filter((r) => r.service === s);
  return `${s} ${of.filter((r) => r.caught).length}/${of.length}`;
};
console.log(`caught ${caught} of ${rows.length} (${Math.round((100 * caught) / Math.max(1, rows.length))} %): ${byService('feed')}, ${byService('gateway')}`);
const fired = rows.filter((r) => r.altered > 0 || r.caught);
const firedCaught = fired.filter((r) => r.caught).length;
console.log(
  `of the ${fired.length} that changed at least one request or answer: caught ${firedCaught} (${Math.round((100 * firedCaught) / Math.max(1, fired.length))} %); ` +
    `${rows.length - fired.length} changed nothing in their run (no defect shown on this reference: inert)`,
);
for (const r of rows.filter((x) => !x.caught)) console.log(`${r.altered ? 'survived' : 'inert'}: ${r.name} — ${r.sentence.slice(0, 140)}`);
if (values.out) writeFileSync(values.out, `${JSON.stringify({ configuration: configuration.id, caught, total: rows.length, rows }, null, 2)}\n`);
