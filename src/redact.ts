/**
 * Replaces every secret the run knows with a reference to the environment variable it came from
 * ($GATEWAY_API_KEY), so exchanges, messages and curl commands can be published.
 */
export class Redactor {
  private readonly pairs: [string, string][] = [];

  constructor(secrets: Record<string, string | undefined> = {}) {
    for (const [name, value] of Object.entries(secrets)) this.add(name, value);
  }

  add(name: string, value: string | undefined): void {
    if (!value || value.length < 4) return;
    const ref = `$${name}`;
    const variants = new Set([value, encodeURIComponent(value)]);
    // The same secret in the forms a service may echo it in: without its sk- prefix (the part a key's owner would
    // call the secret), and base64-encoded (a Basic credential, a token dump), whole or that part, at each of the three
    // offsets it may start at inside a longer encoded text (user:key). Each is the secret all the same: it never goes
    // into a report, and the redaction checks find it by its reference. (A part under 12 characters is only replaced
    // whole, with its prefix: too short to tell from other text.)
    const body = /^sk-/i.test(value) ? value.slice(3) : undefined;
    for (const v of [value, body]) {
      if (!v || v.length < 12) continue;
      variants.add(v);
      for (const b64 of encodedAtEachOffset(v)) {
        variants.add(b64);
        variants.add(b64.replace(/\+/g, '-').replace(/\//g, '_'));
      }
    }
    for (const v of variants) this.pairs.push([v, ref]);
    // Longest first, so a secret that contains another is replaced whole.
    this.pairs.sort((a, b) => b[0].length - a[0].length);
  }

  get names(): string[] {
    return [...new Set(this.pairs.map(([, ref]) => ref.slice(1)))];
  }

  redact(text: string): string {
    let out = text;
    for (const [secret, ref] of this.pairs) if (out.includes(secret)) out = out.split(secret).join(ref);
    return out;
  }

  redactRecord(rec: Record<string, string>): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(rec)) out[k] = this.redact(v);
    return out;
  }
}

/** For printing configuration: keep a hint of the value's shape, never the value. */
export function mask(value: string | undefined): string {
  if (!value) return '(unset)';
  return `${value.slice(0, 3)}…(${value.length} chars)`;
}

/**
 * The base64 text of `v` as it appears inside the encoding of a longer text, for each of the three byte offsets it may
 * start at: the characters that depend on the bytes before or after it dropped.
 */
function encodedAtEachOffset(v: string): string[] {
  const bytes = Buffer.from(v, 'utf8');
  return [0, 1, 2].map((shift) => {
    const b64 = Buffer.concat([Buffer.alloc(shift), bytes])
      .toString('base64')
      .replace(/=+$/, '');
    const head = Math.ceil((8 * shift) / 6);
    const tail = (shift + bytes.length) % 3 === 0 ? 0 : 1;
    return b64.slice(head, b64.length - tail);
  });
}
