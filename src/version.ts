/** The suite's own name and version (package.json, read from the package root: works from a clone and from node_modules). */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const PACKAGE = JSON.parse(readFileSync(fileURLToPath(new URL('../package.json', import.meta.url)), 'utf8')) as { name: string; version: string };
export const SUITE_NAME = PACKAGE.name;
export const SUITE_VERSION = PACKAGE.version;

/**
 * Version of the summary.json format (specs/summary.schema.json). Raise the major on a change that removes or
 * retypes a field a reader may use; the minor when fields are added.
 */
export const SUMMARY_SCHEMA_VERSION = '1.1';
