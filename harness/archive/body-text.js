// Pure: a body's text as a HAR or a browser gives it: a string, or a text
// kept on disk (spool.js: a large HAR's bodies) that answers the same
// questions, so that the archive is made the same way from either.
import { isBase64 } from './base64.js';

const spooled = (t) => t !== null && typeof t === 'object' && typeof t.string === 'function';

export const isBodyText = (t) => typeof t === 'string' || spooled(t);
export const textIsBase64 = (t) => (spooled(t) ? t.base64Ok : isBase64(t));
export const textString = (t) => (spooled(t) ? t.string() : t);
export const textBase64Bytes = (t) => (spooled(t) ? t.base64Bytes() : Buffer.from(t, 'base64'));
