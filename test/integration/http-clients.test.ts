import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

let t: TestApp;
beforeEach(async () => {
  t = await startTestApp();
});
afterEach(async () => {
  await t.close();
});

const newClient = (fields: Record<string, unknown>) =>
  t.request({ method: 'POST', url: '/v1/clients', payload: fields });

describe('POST /clients', () => {
  it('creates a client with normalised contact details', async () => {
    const response = await newClient({
      first_name: '  Zoë ',
      last_name: "O'Brien",
      phone: '+44 7400 123456',
      email: ' Zoe.OBrien@Example.COM ',
      marketing_consent: true,
    });
    expect(response.statusCode).toBe(201);
    expect(response.json().data).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      first_name: 'Zoë',
      last_name: "O'Brien",
      phone: '+447400123456',
      email: 'zoe.obrien@example.com',
      marketing_consent: true,
      created_at: '2026-11-23T09:00:00Z',
    });
  });

  it('defaults marketing_consent to false and accepts e-mail alone', async () => {
    const response = await newClient({ first_name: 'A', last_name: 'B', email: 'a@example.com' });
    expect(response.statusCode).toBe(201);
    expect(response.json().data).toMatchObject({ phone: null, marketing_consent: false });
  });

  it('returns the existing client unchanged when the phone matches', async () => {
    const response = await newClient({ first_name: 'Other', last_name: 'Name', phone: '+447911123456' });
    expect(response.statusCode).toBe(200);
    expect(response.json().data).toMatchObject({
      first_name: 'Jo',
      last_name: 'Bloggs',
      email: 'jo@example.com',
    });
  });

  it('returns the existing client when the e-mail matches in another case', async () => {
    const response = await newClient({ first_name: 'Jo', last_name: 'B', email: 'JO@EXAMPLE.COM' });
    expect(response.statusCode).toBe(200);
    expect(response.json().data.phone).toBe('+447911123456');
  });

  it('makes one client of simultaneous registrations of one phone', async () => {
    const responses = await Promise.all(
      Array.from({ length: 10 }, () =>
        newClient({ first_name: 'Sam', last_name: 'Lee', phone: '+447400123457' }),
      ),
    );
    expect(responses.map((r) => r.statusCode).sort()).toEqual([
      200, 200, 200, 200, 200, 200, 200, 200, 200, 201,
    ]);
    expect(new Set(responses.map((r) => r.json().data.id)).size).toBe(1);
  });

  it.each([
    [{ first_name: 'A', last_name: 'B' }, 'phone'],
    [{ first_name: 'A', last_name: 'B', phone: '07911123456' }, 'phone'],
    [{ first_name: 'A', last_name: 'B', phone: '+44123' }, 'phone'],
    [{ first_name: 'A', last_name: 'B', email: 'not-an-email' }, 'email'],
    [{ first_name: '   ', last_name: 'B', email: 'a@example.com' }, 'first_name'],
    [{ first_name: 'A', last_name: 'x'.repeat(61), email: 'a@example.com' }, 'last_name'],
    [{ first_name: 'A\u0007', last_name: 'B', email: 'a@example.com' }, 'first_name'],
    [{ last_name: 'B', email: 'a@example.com' }, 'first_name'],
    [{ first_name: 5, last_name: 'B', email: 'a@example.com' }, 'first_name'],
    [
      { first_name: 'A', last_name: 'B', email: 'a@example.com', marketing_consent: 'yes' },
      'marketing_consent',
    ],
  ])('refuses %j naming %s', async (body, param) => {
    const response = await newClient(body);
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toMatchObject({ code: 'invalid_request', param });
  });

  it('says of a short name with a line break or a tab what is wrong with it, not its length', async () => {
    for (const [body, field] of [
      [{ first_name: 'Ann\nMarie', last_name: 'B', email: 'a@example.com' }, 'first_name'],
      [{ first_name: 'A', last_name: 'Le\te', email: 'a@example.com' }, 'last_name'],
      // NEXT LINE (a C1 control) and LINE SEPARATOR break a line as a line feed does.
      [{ first_name: 'Ann\u0085Marie', last_name: 'B', email: 'a@example.com' }, 'first_name'],
      [{ first_name: 'A', last_name: 'Le\u2028e', email: 'a@example.com' }, 'last_name'],
    ] as const) {
      const response = await newClient(body);
      expect(response.statusCode).toBe(400);
      expect(response.json().error).toEqual({
        code: 'invalid_request',
        message: `${field} holds a control character (a line break, a tab or the like): send the name as one line of text.`,
        param: field,
      });
    }
    // Blank or too long is still said as the length it must have.
    const long = await newClient({
      first_name: `${'x'.repeat(61)}\n`,
      last_name: 'B',
      email: 'a@example.com',
    });
    expect(long.json().error.message).toBe('first_name must be 1 to 60 characters.');
  });

  it('refuses a name that shows nothing, of zero-width spaces or direction controls alone', async () => {
    for (const name of ['\u200b\u200b', ' \u202e ', '\u2060\ufeff\u00ad']) {
      const response = await newClient({ first_name: 'Ann', last_name: name, email: 'a@example.com' });
      expect(response.statusCode).toBe(400);
      expect(response.json().error).toEqual({
        code: 'invalid_request',
        message:
          'last_name shows nothing (it holds only zero-width or invisible characters): send the name as written.',
        param: 'last_name',
      });
    }
    // One inside a name that shows is kept as sent.
    const joined = await newClient({ first_name: 'Ann\u200bMarie', last_name: 'B', email: 'zw@example.com' });
    expect(joined.statusCode).toBe(201);
    expect(joined.json().data.first_name).toBe('Ann\u200bMarie');
  });

  it('accepts a name in a right-to-left script, which needs no direction controls', async () => {
    const response = await newClient({ first_name: 'محمد', last_name: 'כהן', email: 'rtl@example.com' });
    expect(response.statusCode, response.body).toBe(201);
  });

  it('accepts a 60-character name counted in characters, not bytes', async () => {
    const response = await newClient({ first_name: 'é'.repeat(60), last_name: 'B', email: 'e@example.com' });
    expect(response.statusCode).toBe(201);
  });
});

describe('a refused phone number', () => {
  it('is said for what it is: one of Ofcom’s drama numbers, a number no one has, digits missing, no country code', async () => {
    const refusal = async (phone: string) => {
      const registered = await newClient({ first_name: 'Dee', last_name: 'Rama', phone });
      expect(registered.statusCode, phone).toBe(400);
      const looked = await t.request({
        method: 'GET',
        url: `/v1/clients?phone=${encodeURIComponent(phone)}`,
      });
      expect(looked.json(), phone).toEqual(registered.json());
      expect(registered.json().error).toMatchObject({ code: 'invalid_request', param: 'phone' });
      return registered.json().error.message as string;
    };
    // 07700 900000 to 900999 are kept by Ofcom for drama: a full, well-formed UK mobile number that is
    // no one's. It was refused as not "an E.164 number with its country code", which it is.
    const drama = await refusal('+447700900123');
    expect(drama).toBe(
      "phone is in a range Ofcom keeps for TV, film and radio drama (such as 07700 900000 to 07700 900999), so it is no one's real number: give a number the person really uses.",
    );
    expect(await refusal('+4479111234')).toBe(
      'phone does not have as many digits as a number with the country code +44 has.',
    );
    expect(await refusal('+44791112345678')).toBe(
      'phone is too long for a number with the country code +44: it has a digit or more too many.',
    );
    expect(await refusal('+15555550123')).toBe(
      'phone is not a number in use with the country code +1: no number there begins like that.',
    );
    expect(await refusal('07911 123456')).toBe(
      'phone has no country code: give it in international form, such as +447911123456.',
    );
    // A number with words or an extension after it is no number: neither is dropped without a word.
    for (const phone of [
      '+447911123456abc',
      '+447911123456 ext. 12',
      '+447911123456;ext=12',
      '+447911123456#12',
    ]) {
      expect(await refusal(phone)).toMatch(/^phone /);
    }
    // A message's call-back number, national at the location: the same words.
    const message = await t.request({
      method: 'POST',
      url: '/v1/messages',
      payload: { caller_name: 'Dee', message: 'Call me back', phone: '07700 900123', location_slug: 'soho' },
    });
    expect(message.statusCode).toBe(400);
    expect(message.json().error.message).toBe(drama);
  });
});

describe('GET /clients', () => {
  it('finds a client by phone and by e-mail', async () => {
    const byPhone = await t.request({
      method: 'GET',
      url: `/v1/clients?phone=${encodeURIComponent('+447911123456')}`,
    });
    expect(byPhone.statusCode).toBe(200);
    expect(byPhone.json().data.first_name).toBe('Jo');
    const byEmail = await t.request({ method: 'GET', url: '/v1/clients?email=Jo%40Example.com' });
    expect(byEmail.json().data.id).toBe(byPhone.json().data.id);
  });

  it('uses the phone first when both are given, then the e-mail', async () => {
    await newClient({ first_name: 'Em', last_name: 'Ail', email: 'em@example.com' });
    const phoneWins = await t.request({
      method: 'GET',
      url: `/v1/clients?phone=${encodeURIComponent('+447911123456')}&email=em%40example.com`,
    });
    expect(phoneWins.json().data.first_name).toBe('Jo');
    const emailFallback = await t.request({
      method: 'GET',
      url: `/v1/clients?phone=${encodeURIComponent('+447400123456')}&email=em%40example.com`,
    });
    expect(emailFallback.json().data.first_name).toBe('Em');
  });

  it('reads a + written unencoded in the query (which arrives as a space) as the +', async () => {
    const byPhone = await t.request({ method: 'GET', url: '/v1/clients?phone=+447911123456' });
    expect(byPhone.statusCode).toBe(200);
    expect(byPhone.json().data.first_name).toBe('Jo');
    await newClient({ first_name: 'Plus', last_name: 'Tag', email: 'jo+salon@example.com' });
    const byEmail = await t.request({ method: 'GET', url: '/v1/clients?email=jo+salon@example.com' });
    expect(byEmail.statusCode).toBe(200);
    expect(byEmail.json().data.first_name).toBe('Plus');
    const spaced = await t.request({ method: 'GET', url: '/v1/clients?phone=%20%207911123456' });
    expect(spaced.json().error).toMatchObject({ code: 'invalid_request', param: 'phone' });
  });

  it('answers 404 not_found when nobody matches', async () => {
    const response = await t.request({
      method: 'GET',
      url: `/v1/clients?phone=${encodeURIComponent('+447400123456')}`,
    });
    expect(response.statusCode).toBe(404);
    expect(response.json().error.code).toBe('not_found');
  });

  it('answers 400 without phone or email, or with a national number', async () => {
    expect((await t.request({ method: 'GET', url: '/v1/clients' })).json().error).toMatchObject({
      code: 'invalid_request',
    });
    const national = await t.request({ method: 'GET', url: '/v1/clients?phone=07911123456' });
    expect(national.json().error).toMatchObject({ code: 'invalid_request', param: 'phone' });
  });

  it('is allowed with a read key', async () => {
    const response = await t.request({
      method: 'GET',
      url: '/v1/clients?email=jo%40example.com',
      key: t.keys.read,
    });
    expect(response.statusCode).toBe(200);
  });
});
