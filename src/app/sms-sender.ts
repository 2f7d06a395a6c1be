import twilio from 'twilio';
import RequestClient from 'twilio/lib/base/RequestClient.js';
import {
  DeliveryError,
  type MessageSender,
  TWILIO_DEFAULT_BASE,
  type TwilioSettings,
  withoutPersonalData,
} from './message-sender.ts';

const TWILIO_TIMEOUT_MS = 20_000;

/** The reason kept for a 401 or 403: what to mend, without the provider's words. */
const CREDENTIALS_REFUSED =
  "the account's credentials were refused (TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN, or a suspended account)";

/**
 * The twilio package's HTTP client, pointed at TWILIO_API_BASE and carrying the outbox id as the
 * request's idempotency token. The package has no base-URL setting; a custom httpClient is its
 * documented way to change how requests are made, so the URL's origin is rewritten here and
 * everything else (basic auth, the form encoding, errors) stays the package's.
 */
class OutboxRequestClient extends RequestClient {
  readonly #apiBase: string;
  readonly #token: string;

  constructor(apiBase: string, token: string) {
    super({ timeout: TWILIO_TIMEOUT_MS });
    this.#apiBase = apiBase.replace(/\/+$/, '');
    this.#token = token;
  }

  override request<TData>(opts: RequestClient.RequestOptions<TData>) {
    const uri = opts.uri.startsWith(TWILIO_DEFAULT_BASE)
      ? this.#apiBase + opts.uri.slice(TWILIO_DEFAULT_BASE.length)
      : opts.uri;
    const headers = { ...opts.headers, 'I-Twilio-Idempotency-Token': this.#token };
    return super.request({ ...opts, uri, headers });
  }
}

/**
 * SMS through Twilio's Messages API (POST {base}/2010-04-01/Accounts/{sid}/Messages.json with To,
 * From and Body, basic auth), with the twilio package. A 4xx answer about the message is final (a bad
 * number: 400 with code 21211 or 21614); 401 and 403 say the account's credentials were refused (a
 * mistyped token, a suspended account), which the operator mends, so they are tried again later with
 * 429, 5xx and network failures: a confirmation written meanwhile is not lost.
 */
export function twilioSender(settings: TwilioSettings): MessageSender {
  return {
    // No concurrency: each send has a client (and an HTTP agent) of its own, so none waits for another.
    timeoutMs: TWILIO_TIMEOUT_MS,
    async send({ id, to, rendered }) {
      const client = twilio(settings.accountSid, settings.authToken, {
        httpClient: new OutboxRequestClient(settings.apiBase, id),
      });
      try {
        const message = await client.messages.create({ to, from: settings.from, body: rendered.sms });
        return { providerId: message.sid };
      } catch (error) {
        const rest = error as { status?: number; code?: number; message?: string };
        const status = typeof rest.status === 'number' ? rest.status : null;
        const what = status === null ? 'no answer' : `HTTP ${status}${rest.code ? ` code ${rest.code}` : ''}`;
        if (status === 401 || status === 403)
          throw new DeliveryError(`Twilio ${what}: ${CREDENTIALS_REFUSED}`, false);
        const permanent = status !== null && status >= 400 && status < 500 && status !== 429;
        throw new DeliveryError(
          withoutPersonalData(`Twilio ${what}: ${rest.message ?? String(error)}`, to),
          permanent,
        );
      }
    },
  };
}
