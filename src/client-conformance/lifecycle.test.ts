/**
 * Client conformance has the conformance command's lifecycle and verdicts (src/verdicts.ts): an interrupted run is
 * partial, and a partial run is never conformant, whatever the traffic seen so far showed.
 */
import { expect, test } from 'vitest';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cleanEnv, readSummary } from '../../fixtures/run-cli.js';
import { scratchDir } from '../../fixtures/scratch.js';
import type { ClientSummary } from './report.js';
import { unlisted } from '../outputs/index.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** What the client prints when its work is done (the command line itself, echoed in the log, holds the sum, not this). */
const DONE = 'client-work-done-42';

test('interrupted after a careful client did its work: partial, so not conformant (error, exit 143)', async () => {
  const reportDir = scratchDir('client-interrupted-');
  // The careful client does everything right, then the command waits; the run is interrupted while it waits.
  const client = `node examples/clients/careful-gateway-client.mjs && echo client-work-done-$((40+2)) && exec sleep 600`;
  const args = ['--import', 'tsx', path.join(ROOT, 'src/client-conformance/cli.ts'), '--service', 'gateway', '--report-dir', reportDir, '--no-html'];
  const child = spawn(process.execPath, [...args, '--', 'sh', '-c', client], { cwd: ROOT, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stdout.resume();
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
    if (stderr.includes(DONE)) child.kill('SIGTERM');
  });
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  const summary = readSummary<ClientSummary>(reportDir);
  expect(stderr, 'the client finished its work before the interruption').toContain(DONE);
  expect([code, summary?.complete], stderr.slice(-2000)).toEqual([143, false]);
  expect(summary?.verdict, summary?.message).toBe('error');
  expect(summary?.message).toMatch(/SIGTERM/);
  // Its report directory holds the outputs of the list and nothing else (the partial run's included).
  expect(unlisted(reportDir)).toEqual([]);
  expect(existsSync(path.join(reportDir, 'ctrf.json')) && existsSync(path.join(reportDir, 'html', 'matrix.html'))).toBe(true);
}, 90_000);
