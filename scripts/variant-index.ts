/**
 * `npx tsx scripts/variant-index.ts [--check]`: the self-test's faulty variants (fixtures/variants.ts VARIANTS: the
 * project's own, and the blind ones it runs) as data, written to specs/variant-index.json: each variant's name, service,
 * description, the requirements it breaks and the facets it declares. The self-test shows each of them failing at
 * least one check citing a requirement it breaks and no check citing another (and, for each facet it declares, a check
 * of that facet), so the index is what the clause matrix shows as the faulty variant that proves a requirement or a
 * facet, without loading the fixtures in a user's run. `--check` writes nothing and exits 1 when the committed file
 * differs from the variants (fixtures/variant-index.test.ts runs it).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { VARIANTS } from '../fixtures/variants.js';
import { VARIANT_INDEX_FILE, type VariantIndex, type VariantIndexRow } from '../src/outputs/matrix.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Every variant of the self-test, in name order within each service. */
export function variantRows(): VariantIndexRow[] {
  return VARIANTS.map(({ service, modifier: m }) => ({
    name: m.name,
    service,
    description: m.description,
    breaks: [...m.breaks],
    ...(m.facets?.length ? { facets: [...m.facets] } : {}),
  })).sort((a, b) => a.service.localeCompare(b.service) || a.name.localeCompare(b.name));
}

/** The committed file's text (formatted as Prettier would, so `npm run lint` accepts it). */
export async function variantIndexText(variants: VariantIndexRow[]): Promise<string> {
  const data: VariantIndex = { generatedBy: 'npx tsx scripts/variant-index.ts', variants };
  const prettier = await import('prettier');
  const file = path.join(ROOT, VARIANT_INDEX_FILE);
  return prettier.format(JSON.stringify(data), { ...(await prettier.resolveConfig(file)), filepath: file });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const rows = variantRows();
  const file = path.join(ROOT, VARIANT_INDEX_FILE);
  const text = await variantIndexText(rows);
  if (process.argv.includes('--check')) {
    let committed = '';
    try {
      committed = readFileSync(file, 'utf8');
    } catch {
      // missing: out of date below
    }
    if (text !== committed) {
      console.error(`${VARIANT_INDEX_FILE} is out of date (run npx tsx scripts/variant-index.ts)`);
      process.exitCode = 1;
    } else console.log(`${VARIANT_INDEX_FILE}: ${rows.length} variants, as fixtures/variants.ts has them`);
  } else {
    writeFileSync(file, text);
    console.log(`${VARIANT_INDEX_FILE}: ${rows.length} variants written`);
  }
}
