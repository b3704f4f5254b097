/**
 * What a published report may say about the machine that ran it: nothing. A check's reason is the suite's sentence
 * about the target; the stack frames of the harness, the name of its assertion class and the runner's paths (its
 * checkout, its node_modules) are removed from everything written (the summary, JUnit, CTRF, the Allure results
 * and so the HTML report). What the target itself sent (a response body, a header) is evidence and kept as it came.
 */
import { fileURLToPath } from 'node:url';
import type { CheckResult } from '../verdicts.js';

/** The suite's root on this machine, as a path and as a file URL (both end with a separator). */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const ROOT_URL = new URL('../..', import.meta.url).href;

/** The suite's own error classes and the assertion libraries', as they prefix a message or a stack. */
const FRAMEWORK_NAME = /^(?:AssertionViolation|AssertionError|PreconditionFailed|NotConfigured)(?: \[[^\]]*\])?: /gm;
/** A stack frame: `    at fn (/path:1:2)`, `    at /path:1:2`, `    at async file:///path:1:2`, `    at fn (node:internal/…)`. */
const STACK_FRAME = /^[ \t]+at (?:async )?(?:[^\s()]+ (?:\[as [^\]]+\] )?\()?(?:file:|node:|\/|[A-Za-z]:\\|<anonymous>)[^\n]*\n?/gm;

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const ROOTS = new RegExp(`${escape(ROOT_URL)}|${escape(ROOT)}`, 'g');

/** A message fit to publish: no stack frame, no framework class name, paths of the suite relative to its root. */
export function publishable(text: string): string {
  return text.replace(STACK_FRAME, '').replace(FRAMEWORK_NAME, '').replace(ROOTS, '').replace(/\s+$/, '');
}

/** A check's result with its message fit to publish. */
export function publishableCheck(c: CheckResult): CheckResult {
  return c.message === undefined ? c : { ...c, message: publishable(c.message) };
}

/** Allure labels about the runner (its host, its worker thread) or the test framework, not about the check. */
const RUNNER_LABELS = new Set(['host', 'thread', 'framework', 'language', 'package']);

interface AllureNode {
  statusDetails?: { message?: string; trace?: string };
  steps?: AllureNode[];
  befores?: AllureNode[];
  afters?: AllureNode[];
  labels?: { name: string; value: string }[];
  fullName?: string;
}

/**
 * An Allure result or container fit to publish: no trace (the stack, where the message says all), messages as
 * above, in every step and fixture; no runner or framework labels; the check's id as its full name (vitest's was
 * the test file's path and describe blocks).
 */
export function publishableAllure<T extends AllureNode>(node: T): T {
  const out: AllureNode = { ...node };
  if (node.statusDetails) {
    const { trace: _trace, ...details } = node.statusDetails;
    out.statusDetails = details.message === undefined ? details : { ...details, message: publishable(details.message) };
  }
  for (const k of ['steps', 'befores', 'afters'] as const) {
    const children = node[k];
    if (children) out[k] = children.map((c) => publishableAllure(c));
  }
  if (node.labels) {
    out.labels = node.labels.filter((l) => !RUNNER_LABELS.has(l.name));
    const check = node.labels.find((l) => l.name === 'check')?.value;
    if (check && node.fullName !== undefined) out.fullName = check;
  }
  return out as T;
}
