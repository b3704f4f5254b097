/**
 * The facets of every requirement: each fact it states (a bound on each side, each place it applies, each documented
 * field, each step of a procedure), with the checks that decide it or the reason none can. Most are derived here
 * from the data the suites are generated from (the OpenAPI descriptions' parameter rules, operations, security and
 * request schemas; the key-state table), with the same check-id formulas the suites use, so a facet and its check
 * cannot drift apart. The rest are written under their requirement in specs/<service>/requirements.json.
 * `npm run coverage` lists them; the project's tests fail on a facet with neither a check nor a reason.
 */
import { loadCatalogue, loadOpenApi, operation, type CatalogueEntry, type Facet, type FacetSpec, type JsonSchema, type ParameterObject } from './spec.js';
import { defaultContexts, defaultsCheckId, isPaged, type RuleParameter } from './places.js';
import { CACHING_RULES, FEED_OPERATIONS, PARAMETER_RULE_OPERATIONS, DEFAULTS_REQUIREMENT, cachingCheckId, paramCheckId } from './feed.js';
import {
  FORM_LABEL,
  FORM_REQUIREMENT,
  GW_CHECK_IDS,
  KEY_STATES,
  LIMITED_FORMS,
  PAYLOAD_OPERATIONS,
  payloadExamples,
  formRefusedRequirement,
  operationsOf,
  requiredOnlyBody,
  shapeFor,
  STREAM_OPERATIONS,
} from './gateway.js';

export type { Facet } from './spec.js';

/** The gateway's operations with the description's own paths: facets do not depend on a run's profile. */
const describedOperations = async () => operationsOf(await loadOpenApi('gateway'), (p) => p);

const facet = (requirement: string, f: FacetSpec, source: string): Facet => ({ key: `${requirement}/${f.id}`, requirement, source, ...f });

/** Each bound of each parameter rule of the feed, both sides, and each default (parameters.checks.ts). */
async function parameterFacets(): Promise<Facet[]> {
  const doc = await loadOpenApi('feed');
  const out: Facet[] = [];
  for (const operationId of PARAMETER_RULE_OPERATIONS) {
    const { op } = operation(doc, operationId);
    for (const p of (op.parameters ?? []) as (ParameterObject & { 'x-requirement'?: string })[]) {
      const req = p['x-requirement'];
      if (p.in !== 'query' || !req) continue;
      const s = p.schema;
      const id = paramCheckId(operationId, p.name);
      const at = `${operationId}.${p.name}`;
      const src = `OpenAPI ${operationId} parameter ${p.name}`;
      const add = (fid: string, kind: FacetSpec['kind'], text: string, checks: string[], requirement = req) =>
        out.push(facet(requirement, { id: `${at}.${fid}`, kind, text, checks }, src));
      if (s.enum) {
        add('each-value', 'bound', `${operationId}: each documented ${p.name} (${(s.enum as unknown[]).join(', ')}) is served`, [`${id}-each-value`]);
        add('other-values', 'bound', `${operationId}: a ${p.name} outside the list, and one next to a listed value, answers 400`, [
          `${id}-other-values`,
          `${id}-near-misses`,
        ]);
      }
      if (s.type === 'integer' && s.minimum !== undefined && s.maximum !== undefined) {
        add('min-served', 'bound', `${operationId}: ${p.name}=${s.minimum} (the smallest allowed) is served`, [`${id}-in-range`]);
        add('max-served', 'bound', `${operationId}: ${p.name}=${s.maximum} (the largest allowed) is served`, [`${id}-in-range`]);
        // A paged operation's page size: the largest is honoured, not cut to a smaller cap while more rows follow.
        if (p.name === 'limit' && isPaged(operationId))
          add('max-not-capped', 'bound', `${operationId}: limit=${s.maximum} is not cut to a smaller page size while hasMore says more rows follow`, [
            `${id}-in-range`,
          ]);
        add('below-min-refused', 'bound', `${operationId}: ${p.name}=${Number(s.minimum) - 1} answers 400`, [`${id}-out-of-range`]);
        add('above-max-refused', 'bound', `${operationId}: ${p.name}=${Number(s.maximum) + 1} answers 400`, [`${id}-out-of-range`]);
        add('not-integer-refused', 'bound', `${operationId}: a ${p.name} that is not an integer answers 400`, [`${id}-out-of-range`]);
      }
      if (s.type === 'string' && s.minLength !== undefined && s.maxLength !== undefined) {
        add('shortest-served', 'bound', `${operationId}: a ${p.name} of ${s.minLength} code point(s) is served`, [`${id}-in-range`]);
        add('longest-served', 'bound', `${operationId}: a ${p.name} of ${s.maxLength} code points is served`, [`${id}-in-range`]);
        add('too-long-refused', 'bound', `${operationId}: a ${p.name} of ${Number(s.maxLength) + 1} code points answers 400`, [`${id}-out-of-range`]);
        if (Number(s.minLength) > 0)
          add('too-short-refused', 'bound', `${operationId}: a ${p.name} shorter than ${s.minLength} code point(s) answers 400`, [`${id}-out-of-range`]);
      }
      if (s.default !== undefined) {
        add(
          'default',
          'condition',
          `${operationId}: leaving ${p.name} out is ${p.name}=${String(s.default)}`,
          [`${id}-default`],
          DEFAULTS_REQUIREMENT[operationId] ?? req,
        );
      }
    }
    // Every default under each context parameter, all sent at once (parameters.checks.ts).
    const rules = (op.parameters ?? []) as RuleParameter[];
    for (const c of defaultContexts(operationId, rules)) {
      const defaulted = rules.filter((p) => p.in === 'query' && p['x-requirement'] && p.name !== c.name && p.schema.default !== undefined);
      if (defaulted.length === 0) continue;
      const requirement = DEFAULTS_REQUIREMENT[operationId] ?? defaulted[0]!['x-requirement']!;
      out.push(
        facet(
          requirement,
          {
            id: `${operationId}.defaults-with-${c.name}`,
            kind: 'condition',
            text: `${operationId}: with ${c.name}=${c.search ? 'a word the first page shows most' : c.value}, leaving out ${defaulted.map((p) => p.name).join(', ')} is sending ${defaulted.map((p) => `${p.name}=${String(p.schema.default)}`).join(', ')}`,
            checks: [defaultsCheckId(operationId, c.name)],
          },
          `OpenAPI ${operationId} parameters`,
        ),
      );
    }
  }
  return out;
}

/** The caching rules of the Endpoints and Events sections, on every GET operation (conditional-requests.checks.ts). */
function cachingFacets(): Facet[] {
  const text: Record<keyof typeof CACHING_RULES, string> = {
    'etag-cache-control': 'a 200 carries ETag and Cache-Control',
    's-maxage': 'Cache-Control carries s-maxage',
    'conditional-304': 'If-None-Match with the current ETag answers 304',
    '304-headers': 'a 304 has no body and carries ETag and Cache-Control',
    'etag-stable': 'the ETag stays the same while the content does',
  };
  return FEED_OPERATIONS.flatMap((o) =>
    (Object.keys(CACHING_RULES) as (keyof typeof CACHING_RULES)[]).map((rule) =>
      facet(
        CACHING_RULES[rule],
        { id: `${o.operationId}.${rule}`, kind: 'place', text: `${o.operationId}: ${text[rule]}`, checks: [cachingCheckId(rule, o.operationId)] },
        'FEED_OPERATIONS',
      ),
    ),
  );
}

/** Each key state on each path family and on the realtime WebSocket; each key form on each path (Authentication). */
async function keyFacets(): Promise<Facet[]> {
  const ops = await describedOperations();
  const out: Facet[] = [];
  for (const st of KEY_STATES) {
    for (const op of ops) {
      const where = op.websocket ? 'realtime' : op.operationId;
      out.push(
        facet(
          st.reqs[0]!,
          {
            id: `${st.slug}@${where}`,
            kind: 'place',
            text: `${op.method} ${op.display} refuses ${st.what} (${st.statuses.join(' or ')})`,
            checks: [GW_CHECK_IDS.keyState(st.slug, where)],
          },
          'KEY_STATES × the gateway operations',
        ),
      );
    }
  }
  for (const op of ops.filter((o) => !o.websocket)) {
    const place = `${op.method} ${op.display}`;
    const src = `OpenAPI ${op.operationId} security (the Authentication table)`;
    for (const form of op.forms)
      out.push(
        facet(
          FORM_REQUIREMENT[form]!,
          {
            id: `${form}@${op.operationId}`,
            kind: 'place',
            text: `${place} accepts the key in ${FORM_LABEL[form]}`,
            checks: [GW_CHECK_IDS.formAccepted(form, op.operationId)],
          },
          src,
        ),
      );
    for (const form of LIMITED_FORMS.filter((f) => !op.forms.includes(f)))
      out.push(
        facet(
          formRefusedRequirement(form),
          {
            id: `${form}@${op.operationId}`,
            kind: 'place',
            text: `${place} refuses a key in ${FORM_LABEL[form]} (not listed for it)`,
            checks: [GW_CHECK_IDS.formRefused(form, op.operationId, op.family)],
          },
          src,
        ),
      );
    out.push(
      facet(
        'gw-credential-required',
        {
          id: `none@${op.operationId}`,
          kind: 'place',
          text: `${place} without any credential answers 401`,
          checks: [GW_CHECK_IDS.noCredential(op.operationId)],
        },
        src,
      ),
    );
  }
  return out;
}

/** Each documented request field of each generation payload: left out, or of another type, answers 400 (payloads.checks.ts). */
async function payloadFacets(): Promise<Facet[]> {
  const ops = (await describedOperations()).filter((o) => PAYLOAD_OPERATIONS.includes(o.operationId));
  return ops.flatMap((op) => {
    const schema = (op.op as { requestBody?: { content: Record<string, { schema: JsonSchema }> } }).requestBody!.content['application/json']!.schema;
    const { fixed } = payloadExamples(schema, requiredOnlyBody(op.operationId, 'model'));
    return fixed.map((b) =>
      facet(
        'gw-request-payload-400',
        {
          id: `${op.operationId}.${b.label
            .replace(/[^a-z0-9]+/gi, '-')
            .replace(/^-|-$/g, '')
            .toLowerCase()}`,
          kind: 'field',
          text: `${op.method} ${op.display} with a body ${b.label} answers 400`,
          checks: [GW_CHECK_IDS.brokenPayload(op.operationId)],
        },
        `OpenAPI ${op.operationId} request schema`,
      ),
    );
  });
}

/** The refusals every generation path makes as the others do: an unknown model, a body that is not JSON, a key refusal's type. */
async function perPathFacets(): Promise<Facet[]> {
  const ops = await describedOperations();
  const out: Facet[] = [];
  for (const op of ops.filter((o) => PAYLOAD_OPERATIONS.includes(o.operationId))) {
    const place = `${op.method} ${op.display}`;
    const src = 'the generation operations (Endpoints)';
    out.push(
      facet(
        'gw-unknown-model-code',
        {
          id: op.operationId,
          kind: 'place',
          text: `${place}: an unknown model's error has code model_not_found`,
          checks: [GW_CHECK_IDS.unknownModelCode(op.operationId)],
        },
        src,
      ),
      facet(
        'gw-unknown-model-404',
        { id: op.operationId, kind: 'place', text: `${place}: an unknown model answers 404`, checks: [GW_CHECK_IDS.unknownModel404(op.operationId)] },
        src,
      ),
      facet(
        'gw-invalid-body-400',
        { id: op.operationId, kind: 'place', text: `${place}: a body that is not JSON answers 400`, checks: [GW_CHECK_IDS.malformedJson(op.operationId)] },
        src,
      ),
      facet(
        'gw-429-per-user',
        {
          id: op.operationId,
          kind: 'place',
          text: `${place}: a key over its per-user limit gets 429 without Retry-After`,
          checks: [GW_CHECK_IDS.perUser429(op.operationId)],
        },
        src,
      ),
    );
    // Vendor C too: its refusal is read where it comes in the vendor A envelope.
    out.push(
      facet(
        'gw-error-code-values',
        {
          id: `bad-request-body@${op.operationId}`,
          kind: 'place',
          text: `${place}: a body that is not JSON is refused with code bad_request_body`,
          checks: [GW_CHECK_IDS.malformedJsonCode(op.operationId)],
        },
        src,
      ),
    );
  }
  for (const op of ops.filter((o) => !o.websocket && shapeFor(o.display) === 'vendor-a'))
    out.push(
      facet(
        'gw-error-type-values',
        {
          id: `key-refusal@${op.operationId}`,
          kind: 'place',
          text: `${op.method} ${op.display}: a key refusal has type gateway_error`,
          checks: [op.operationId === 'listModels' ? GW_CHECK_IDS.keyState('expired-key', 'listModels') : GW_CHECK_IDS.keyRefusalType(op.operationId)],
        },
        'the vendor A envelope paths (Errors > type values)',
      ),
    );
  return out;
}

/**
 * Each refusal class on each operation that streams, with `"stream": true` (streams.checks.ts, rate-limits.checks.ts): the
 * key states, an unknown model, a body that is not JSON or lacks its prompt, the per-user limit; and `"stream": false`
 * answered as JSON. The transport is a facet of each rule: an error that precedes a stream keeps its status and body.
 */
async function streamFacets(): Promise<Facet[]> {
  const ops = (await describedOperations()).filter((o) => STREAM_OPERATIONS.includes(o.operationId));
  const src = 'STREAM_OPERATIONS × the refusal classes (transport: "stream": true)';
  const out: Facet[] = [];
  const add = (requirement: string, id: string, text: string, check: string) =>
    out.push(facet(requirement, { id: `stream:${id}`, kind: 'place', text, checks: [check] }, src));
  for (const op of ops) {
    const place = `${op.method} ${op.display} with "stream": true`;
    for (const st of KEY_STATES)
      add(st.reqs[0]!, `${st.slug}@${op.operationId}`, `${place} refuses ${st.what} before any stream`, GW_CHECK_IDS.streamKeyState(st.slug, op.operationId));
    for (const form of LIMITED_FORMS.filter((f) => !op.forms.includes(f)))
      add(
        formRefusedRequirement(form),
        `${form}@${op.operationId}`,
        `${place} refuses a key in ${FORM_LABEL[form]} (not listed for it)`,
        GW_CHECK_IDS.streamFormRefused(form, op.operationId),
      );
    add(
      'gw-429-per-user',
      op.operationId,
      `${place}: a key over its per-user limit gets 429 without Retry-After`,
      GW_CHECK_IDS.streamPerUser429(op.operationId),
    );
    add('gw-unknown-model-404', op.operationId, `${place}: an unknown model answers 404, not a stream`, GW_CHECK_IDS.streamUnknownModel(op.operationId));
    add(
      'gw-unknown-model-code',
      op.operationId,
      `${place}: an unknown model's error has code model_not_found`,
      GW_CHECK_IDS.streamUnknownModel(op.operationId),
    );
    add('gw-invalid-body-400', op.operationId, `${place}: a body that is not JSON answers 400, not a stream`, GW_CHECK_IDS.streamMalformedJson(op.operationId));
    add(
      'gw-request-payload-400',
      op.operationId,
      `${place}: a body without a required field answers 400, not a stream`,
      GW_CHECK_IDS.streamBrokenPayload(op.operationId),
    );
    if (op.operationId !== 'responses')
      out.push(
        facet(
          'gw-stream-false-json',
          {
            id: op.operationId,
            kind: 'place',
            text: `${op.method} ${op.display} with "stream": false answers JSON`,
            checks: [GW_CHECK_IDS.streamFalseJson(op.operationId)],
          },
          src,
        ),
      );
  }
  return out;
}

/** Every facet of both catalogues: the derived ones, then those written under their requirement. */
export async function facets(catalogue: Map<string, CatalogueEntry> = loadCatalogue()): Promise<Facet[]> {
  const written = [...catalogue.values()].flatMap((r) => (r.facets ?? []).map((f) => facet(r.id, f, `specs/${r.service}/requirements.json`)));
  const all = [
    ...(await parameterFacets()),
    ...cachingFacets(),
    ...(await keyFacets()),
    ...(await payloadFacets()),
    ...(await perPathFacets()),
    ...(await streamFacets()),
    ...written,
  ];
  const seen = new Set<string>();
  for (const f of all) {
    if (!catalogue.has(f.requirement)) throw new Error(`facet ${f.key} names unknown requirement ${f.requirement}`);
    if (seen.has(f.key)) throw new Error(`facet ${f.key} is declared twice`);
    seen.add(f.key);
  }
  return all;
}

/** Every facet by key. */
export async function facetsByKey(): Promise<Map<string, Facet>> {
  return new Map((await facets()).map((f) => [f.key, f]));
}
