/**
 * The shapes of secrets found inside free text, one family each. Vendor shapes follow the
 * rules of gitleaks and secretlint (the rule each comes from is named); why they are kept
 * here rather than loaded from a package is docs/decisions/0007-secret-patterns.md. Each
 * family has a test of what it must find and of ordinary text it must leave alone
 * (test/redaction-patterns.test.ts).
 *
 * A family's `pattern` holds one named group, the family's name; a group `<family>Keep`
 * inside it is kept in front of the marker (a header name, a URL's user), so a reader still
 * sees what was there. `marker` is what every match contains: text holding no marker at all
 * is not searched (see MAY_MATCH in redaction.ts). Markers start with a character ordinary
 * prose seldom has (`-`, `_`, `.`, `:`, `=`, a capital) and look behind it for the rest:
 * an expression whose alternatives start with common letters is tried at nearly every
 * position, and searched several times slower on prose.
 */
export interface SecretFamily {
  family: string;
  pattern: string;
  marker: string;
  /** What stands in for a match, when not `[redacted]` after the kept part. */
  placeholder?: string;
  /** For shapes ordinary text can take too: whether this match (its kept part `keep`) is a secret. */
  isSecret?: (match: string, keep: string) => boolean;
}

/** `password` → `[pP][aA][sS][sS][wW][oO][rR][dD]`: the flags of the one combined expression are shared, so case is spelled out. */
function anyCase(word: string): string {
  return word.replace(/[a-z]/g, (letter) => `[${letter}${letter.toUpperCase()}]`);
}

/** Names whose value is a credential, in `name: value`, `name=value` and `"name": "value"`. */
const ASSIGNED_NAMES = [
  'password',
  'passwd',
  'passphrase',
  'client[_-]?secret',
  'secret[_-]?access[_-]?key',
  'secret[_-]?key',
  'api[_-]?key',
  'access[_-]?token',
  'auth[_-]?token',
  'refresh[_-]?token',
  'session[_-]?token',
  'private[_-]?key',
].map(anyCase);

/** Query parameters that carry a credential (OAuth, API keys, signed URLs of S3 and GCS). */
const QUERY_NAMES = [
  ...['token', 'secret', 'password', 'signature', 'credential'].map((word) => `[A-Za-z0-9_-]*${anyCase(word)}`),
  ...['api[_-]?key', 'key', 'sig', 'auth', 'pwd'].map(anyCase),
];

/** Values an unquoted `password: …` takes in code, schemas and documentation, which are no secret. */
const NOT_A_VALUE = /^(?:string|number|boolean|null|undefined|true|false|none|nil|bytes|required|optional|redacted|changeme|\*+|x+|\.+)$/i;
/** `process.env.DB_PASSWORD`, `config.db.password`, `getPassword()`, `${PASSWORD}`, `{{password}}`, `$PASSWORD`, `%s`. */
const CODE_VALUE = /^(?:[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+\)?$|[A-Za-z_$][\w$.]*\(|\$\{|\{\{|\$[A-Za-z_]|%)/;

/**
 * Whether `name: value` names a secret rather than code that reads one: a quoted value is a
 * literal, so a secret; an unquoted one is unless it is a type, a placeholder or an
 * expression.
 */
function isAssignedSecret(match: string, keep: string): boolean {
  if (keep.endsWith('"') || keep.endsWith("'")) return true;
  const value = match.slice(keep.length);
  return !NOT_A_VALUE.test(value) && !CODE_VALUE.test(value);
}

/** `Basic` is a word of prose too: its credentials are base64 of `user:password`. */
function isBasicCredential(match: string, keep: string): boolean {
  return Buffer.from(match.slice(keep.length), 'base64').includes(0x3a);
}

/**
 * An AWS secret access key is 40 characters of base64 (30 random bytes), so it mixes cases and
 * has a digit or a symbol: a hex digest (SHA-1 has 40 characters too) or a word does not.
 */
function isAwsSecret(match: string): boolean {
  return /[A-Z]/.test(match) && /[a-z]/.test(match) && /[0-9/+]/.test(match);
}

/** Base64 characters: an AWS secret is a run of exactly 40 of them, no more. */
const B64 = 'A-Za-z0-9/+';

/** A value that is already a placeholder is left as it is: redaction runs once, and again on exports. */
const NOT_A_PLACEHOLDER = '(?!\\[(?:redacted|omitted))';

/**
 * Order matters: private keys and data URIs first, so their bodies are not half-matched by
 * the shorter patterns; our own key before the vendors' `sk-`.
 */
export const SECRET_FAMILIES: readonly SecretFamily[] = [
  {
    // gitleaks private-key, secretlint privatekey; also PGP blocks, and a key whose END line was cut off.
    family: 'pem',
    pattern: '-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\\s\\S]*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|$)',
    marker: '-----BEGIN ',
    placeholder: '[redacted private key]',
  },
  { family: 'datauri', pattern: 'data:(?<mime>[\\w.+-]+\\/[\\w.+-]+)?(?:;[\\w.+-]+=[^;,\\s]*)*;base64,(?<data>[A-Za-z0-9+/]+={0,2})', marker: ':(?<=data:)' },
  // secretlint basicauth and database-connection-string: `scheme://user:password@host`.
  { family: 'url', pattern: `(?<urlKeep>:\\/\\/[^\\s:/?#@"'<>]*:)${NOT_A_PLACEHOLDER}[^\\s/?#@"'<>]+(?=@)`, marker: ':\\/\\/' },
  { family: 'query', pattern: `(?<queryKeep>[?&](?:${QUERY_NAMES.join('|')})=)${NOT_A_PLACEHOLDER}[^&#\\s"'<>]+`, marker: '=(?<=[?&][\\w-]+=)' },
  {
    family: 'assigned',
    pattern: `(?<assignedKeep>(?:${ASSIGNED_NAMES.join('|')})["']?\\s*[:=]\\s*["']?)${NOT_A_PLACEHOLDER}[^\\s"',;<>}]{4,}`,
    // The separator, then the end of the name before it ("tokens" and "API key" in prose are
    // no marker): an expression that starts with the rare character is searched far faster.
    marker: `[:=](?<=(?:${['pass', 'wd', 'word', 'phrase', 'secret', 'key', 'token'].map(anyCase).join('|')})["']?\\s*[:=])`,
    isSecret: isAssignedSecret,
  },
  // A bearer token has a digit or a symbol, or is long: "Bearer instruments" is prose.
  { family: 'bearer', pattern: '(?<bearerKeep>\\bBearer\\s+)(?=[A-Za-z]*[0-9._~+/-]|[A-Za-z]{20})[A-Za-z0-9._~+/-]{8,}=*', marker: 'Bearer' },
  { family: 'basic', pattern: '(?<basicKeep>\\bBasic\\s+)[A-Za-z0-9+/]{6,}={0,2}', marker: 'Basic', isSecret: isBasicCredential },
  // gitleaks jwt: header and payload are base64url JSON objects, so both start `eyJ`.
  { family: 'jwt', pattern: '\\beyJ[A-Za-z0-9_-]{8,}\\.eyJ[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]*', marker: 'J(?<=eyJ)' },
  { family: 'ours', pattern: '(?<oursKeep>\\bsk-mg-)[A-Za-z0-9]{8,}', marker: '-(?<=sk-)' },
  { family: 'anthropic', pattern: '\\bsk-ant-[A-Za-z0-9_-]{8,}', marker: '-(?<=sk-)' },
  { family: 'openai', pattern: '\\bsk-[A-Za-z0-9_-]{16,}', marker: '-(?<=sk-)' },
  // gitleaks stripe-access-token (secret and restricted keys; publishable pk_ keys are public), and webhook secrets.
  { family: 'stripe', pattern: '\\b(?:[sr]k_(?:live|test|prod)_[A-Za-z0-9]{10,}|whsec_[A-Za-z0-9]{24,})', marker: '_(?<=(?:[sr]k|whsec)_)' },
  // gitleaks gcp-api-key, gcp OAuth client secret and access token; secretlint gcp.
  { family: 'google', pattern: '\\b(?:AIza[0-9A-Za-z_-]{30,}|GOCSPX-[A-Za-z0-9_-]{20,}|ya29\\.[A-Za-z0-9_-]{20,})', marker: 'AIza|-(?<=GOCSPX-)|\\.(?<=ya29\\.)' },
  { family: 'admin', pattern: '\\bmg-admin-[A-Za-z0-9_-]{16,}', marker: '-(?<=mg-admin-)' },
  // gitleaks aws-access-token: long-term (AKIA) and temporary (ASIA) key ids and the rarer kinds.
  { family: 'aws', pattern: '\\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\\b', marker: 'A(?:3T|KIA|SIA|BIA|CCA)' },
  // gitleaks aws-secret-access-key reads only `aws_secret…=`: a bare secret in prose is found by
  // being 40 base64 characters within 60 characters after "aws" or "secret" (checked last:
  // the cheap tests first, then the word behind).
  {
    family: 'awssecret',
    pattern: `(?<![${B64}])(?=[${B64}]{40}(?![${B64}=]))(?<=(?:${anyCase('aws')}|${anyCase('secret')})[\\s\\S]{0,60})[${B64}]{40}`,
    marker: `${anyCase('aws')}|${anyCase('secret')}`,
    isSecret: isAwsSecret,
  },
  // gitleaks github-pat, github-fine-grained-pat, github-oauth, github-app-token, github-refresh-token.
  { family: 'github', pattern: '\\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})', marker: '_(?<=(?:gh[pousr]|github)_)' },
  { family: 'gitlab', pattern: '\\bglpat-[A-Za-z0-9_-]{20,}', marker: '-(?<=glpat-)' },
  // gitleaks slack-bot-token, slack-user-token, slack-app-token and the rest of the xox family; slack-webhook-url.
  { family: 'slack', pattern: '\\b(?:xox[abposre]-[A-Za-z0-9-]{10,}|xapp-[A-Za-z0-9-]{10,})|https:\\/\\/hooks\\.slack\\.com\\/(?:services|workflows)\\/[A-Za-z0-9/]+', marker: 'xox|-(?<=xapp-)|\\.(?<=hooks\\.)' },
  // gitleaks npm-access-token: 36 characters; longer runs are taken whole rather than missed.
  { family: 'npm', pattern: '\\bnpm_[A-Za-z0-9]{36,}', marker: '_(?<=npm_)' },
  { family: 'sendgrid', pattern: '\\bSG\\.[A-Za-z0-9_-]{16,}\\.[A-Za-z0-9_-]{16,}', marker: '\\.(?<=SG\\.)' },
  { family: 'huggingface', pattern: '\\bhf_[A-Za-z0-9]{30,}', marker: '_(?<=hf_)' },
];
