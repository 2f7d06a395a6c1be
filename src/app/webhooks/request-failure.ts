/**
 * Why an outgoing request (a webhook delivery, a busy calendar's fetch) got no answer, in words for
 * the integrator or owner reading the log, with nothing of the URL in them (it may hold a secret).
 */
export function describeRequestFailure(error: NodeJS.ErrnoException, timeoutMs: number): string {
  if (error.name === 'AbortError' || error.name === 'TimeoutError') {
    return `no answer within ${timeoutMs / 1000} s`;
  }
  const code = error.code ?? '';
  // The destination policy's own refusal (destinations.ts) is worded already.
  if (code === 'EWEBHOOKDESTINATION') return error.message;
  const known = WORDS[code];
  if (known) return known;
  if (code === 'EPROTO' || code.startsWith('ERR_SSL_')) {
    return 'the TLS handshake failed (does the address speak https on that port?)';
  }
  if (code.startsWith('ERR_TLS') || code.includes('CERT')) return `the TLS certificate was refused (${code})`;
  return `the request failed (${code || error.name})`;
}

const WORDS: Record<string, string> = {
  ECONNREFUSED: 'the connection was refused',
  ENOTFOUND: "the URL's host does not resolve",
  ECONNRESET: 'the connection was reset',
  ETIMEDOUT: 'the connection timed out',
  EHOSTUNREACH: 'the host cannot be reached',
  ENETUNREACH: 'the host cannot be reached',
  CERT_HAS_EXPIRED: 'the TLS certificate has expired',
  CERT_NOT_YET_VALID: 'the TLS certificate is not valid yet',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'the TLS certificate is self-signed',
  SELF_SIGNED_CERT_IN_CHAIN: 'the TLS certificate is signed by an untrusted (self-signed) authority',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: "the TLS certificate's issuer is not trusted",
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: "the TLS certificate's issuer is not trusted",
  ERR_TLS_CERT_ALTNAME_INVALID: 'the TLS certificate is for another host name',
};
