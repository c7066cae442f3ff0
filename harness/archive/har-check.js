// Pure: the HAR 1.2 schema check (har-schema, by Ajv), with a failure
// said in one line: the file, the JSON path and what HAR 1.2 expects there.
// Where har-schema is stricter than the HARs Chromium's DevTools writes,
// the check follows DevTools, deliberately, and says so below.
import { createRequire } from 'node:module';
import net from 'node:net';
import Ajv from 'ajv';
import { UsageError } from '../core/errors.js';
import { show } from './format.js';
import { isBodyText } from './body-text.js';

const require = createRequire(import.meta.url);
const HAR_SCHEMAS = require('har-schema');
const DRAFT_06 = require('ajv/dist/refs/json-schema-draft-06.json');

// DevTools writes serverIPAddress "" for a request that used no connection
// (a cached or failed one), and older versions write an IPv6 address in
// brackets ("[::1]"); har-schema wants an IPv4 or IPv6 address, which
// refuses both.
const SERVER_ADDRESS = 'server-address';
const isServerAddress = (s) => s === '' || net.isIP(s.replace(/^\[(.*)\]$/, '$1')) !== 0;
const BODY_TEXT = 'bodyText';

function schemaCheck() {
  const ajv = new Ajv({
    allErrors: false,
    verbose: true,
    // har-schema's own annotations ("optional", "min", "unique") check nothing
    keywords: ['optional', 'min', 'unique'],
    // har-schema leaves some objects' "type" out (timings, cache); that is valid JSON Schema
    strictTypes: false,
    formats: {
      // startedDateTime's pattern already asks for ISO 8601; a cookie's expires is any date
      'date-time': (s) => !Number.isNaN(Date.parse(s)),
      // a URL as browsers parse and write them (WHATWG): RFC 3986's "uri" refuses what
      // Chromium leaves unescaped in a query ({, |, })
      uri: (s) => URL.canParse(s),
      [SERVER_ADDRESS]: isServerAddress,
    },
  });
  // a body's text is a string in the file; import-har's reader keeps a large one on disk (har-read.js)
  ajv.addKeyword({ keyword: BODY_TEXT, validate: (_, data) => isBodyText(data), errors: false });
  ajv.addMetaSchema(DRAFT_06);
  const replaced = {
    entry: { serverIPAddress: { type: 'string', format: SERVER_ADDRESS } },
    content: { text: { [BODY_TEXT]: true } },
  };
  for (const [name, schema] of Object.entries(HAR_SCHEMAS))
    ajv.addSchema(replaced[name] ? { ...schema, properties: { ...schema.properties, ...replaced[name] } } : schema);
  return ajv.getSchema('har.json#');
}

const validate = schemaCheck();

// Pure: Ajv's instancePath ("/log/entries/3/request") as the HARs' own
// keys are written in satbench's messages ("log.entries[3].request").
export const jsonPath = (pointer) =>
  pointer
    .split('/')
    .slice(1)
    .map((k) => k.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((k, i) => (/^\d+$/.test(k) ? `[${k}]` : i ? `.${k}` : k))
    .join('');

const A = { object: 'an object', array: 'an array', string: 'a string', integer: 'an integer', number: 'a number' };
const typeWords = (t) =>
  [t]
    .flat()
    .map((x) => A[x] ?? `a ${x}`)
    .join(' or ');
const FORMATS = {
  'date-time': 'a date and time',
  uri: 'a URL',
  [SERVER_ADDRESS]: 'an IPv4 or IPv6 address, or "" (none)',
};

// Pure: what the schema expected where Ajv error `e` is, in words.
function expected(e) {
  switch (e.keyword) {
    case 'required': {
      const sub = e.parentSchema.properties?.[e.params.missingProperty];
      return `${sub?.type ? typeWords(sub.type) : 'an object'}, found none`;
    }
    case 'type':
      return `${typeWords(e.params.type)}, got ${show(e.data)}`;
    case BODY_TEXT:
      return `a string, got ${show(e.data)}`;
    case 'format':
      return `${FORMATS[e.params.format] ?? e.params.format}, got ${show(e.data)}`;
    case 'pattern':
      return `a date and time in ISO 8601 with its time zone, got ${show(e.data)}`;
    default:
      return `${e.message}, got ${show(e.data)}`;
  }
}

/**
 * Pure: throws a one-line UsageError naming `file`, the JSON path and what
 * HAR 1.2 expects there unless `har` passes the HAR 1.2 schema
 * (har-schema, with the exceptions above).
 */
export function checkHar(har, file) {
  if (validate(har)) return;
  const [e] = validate.errors;
  const at = jsonPath(e.instancePath + (e.keyword === 'required' ? `/${e.params.missingProperty}` : ''));
  throw new UsageError(`${file}: ${at || '(the file)'}: expected ${expected(e)} (HAR 1.2)`);
}
