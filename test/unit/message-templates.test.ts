import { describe, expect, it } from 'vitest';
import { type MessageFacts, renderMessage, renderSms } from '../../src/domain/message-templates.ts';
import {
  maskedRecipient,
  reminderDueAt,
  retryDelayMs,
  sentSentence,
  smsSegments,
  toSmsAlphabet,
} from '../../src/domain/outbox.ts';
import { zoneTimeWords } from '../../src/domain/zone-words.ts';
import { clockAfterTime } from '../../src/http/pages/page-shell.ts';

const FACTS: MessageFacts = {
  kind: 'payment_link',
  organisationName: 'Northside Hair',
  locale: 'en-GB',
  locationName: 'Northside Camden',
  locationPhone: '+442074850000',
  timezone: 'Europe/London',
  serviceNames: ['Full colour'],
  staffName: 'Amara Okafor',
  clientFirstName: 'Jo',
  startsAt: Date.parse('2026-12-08T14:30:00Z'),
  reference: 'NHC-7KQ2MX',
  link: 'https://book.example/checkout/8fd397d7-a586-474e-ae17-f3dd478beebf',
  holdExpiresAt: Date.parse('2026-11-23T09:30:00Z'),
  depositDue: '£20.00',
};

describe('message templates', () => {
  it('says the services, staff, weekday, time, location, its phone, the reference and the link', () => {
    expect(renderSms(FACTS)).toBe(
      'Northside Hair: Held for you: Full colour with Amara Okafor on Tuesday 8 December at 14:30 GMT, at Northside Camden. ' +
        'Pay the deposit (£20.00) by Monday 23 November at 9:30 GMT to confirm: https://book.example/checkout/8fd397d7-a586-474e-ae17-f3dd478beebf ' +
        'Ref NHC-7KQ2MX. Questions or changes: +442074850000',
    );
  });

  it('a confirmation, a move, a reminder and a cancellation link back to the booking, in SMS and e-mail', () => {
    const page = 'https://book.example/p/manage/AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_abcde';
    const words = { confirmed: 'See, move or cancel it' };
    for (const kind of ['confirmed', 'rescheduled', 'reminder', 'cancelled'] as const) {
      const facts: MessageFacts = { ...FACTS, kind, link: page, holdExpiresAt: null, depositDue: null };
      const rendered = renderMessage(facts);
      expect(rendered.sms, kind).toContain(page);
      expect(smsSegments(rendered.sms), kind).toBeLessThanOrEqual(2);
      // What happened stays in the SMS beside the link: it is the news.
      expect(rendered.sms, kind).toContain('Tuesday 8 December at 14:30');
      expect(rendered.text, kind).toContain(page);
      expect(rendered.html, kind).toContain(`<a href="${page}">${page}</a>`);
    }
    expect(renderMessage({ ...FACTS, kind: 'confirmed', link: page }).text).toContain(
      `${words.confirmed}: ${page}`,
    );
    expect(renderMessage({ ...FACTS, kind: 'cancelled', link: page }).text).toContain(
      `Your booking: ${page}`,
    );
    expect(renderMessage({ ...FACTS, kind: 'reminder', locale: 'de-DE', link: page }).sms).toContain(
      `Ansehen, verschieben oder stornieren: ${page}`,
    );
    // A kept deposit's sentence comes first, the link last (the HTML makes the tail a link).
    const kept = renderMessage({
      ...FACTS,
      kind: 'cancelled',
      link: page,
      cancellation: { deposit: '£20.00', depositRefunded: false, fee: null },
    });
    expect(kept.text).toContain(`Your deposit of £20.00 is kept (late cancellation). Your booking: ${page}`);
  });

  it('offers in a link’s words only the changes the location’s policy still allows', () => {
    const page = 'https://book.example/p/manage/AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_abcde';
    const reminder: MessageFacts = {
      ...FACTS,
      kind: 'reminder',
      link: page,
      holdExpiresAt: null,
      depositDue: null,
    };
    const said = (changes: { move: boolean; cancel: boolean }, locale = 'en-GB') =>
      renderMessage({ ...reminder, changes, locale }).sms;
    expect(said({ move: true, cancel: true })).toContain(`See, move or cancel it: ${page}`);
    expect(said({ move: false, cancel: true })).toContain(`See or cancel it: ${page}`);
    expect(said({ move: true, cancel: false })).toContain(`See or move it: ${page}`);
    expect(said({ move: false, cancel: false })).toContain(`Your booking: ${page}`);
    expect(said({ move: false, cancel: true }, 'de-DE')).toContain(`Ansehen oder stornieren: ${page}`);
    expect(said({ move: false, cancel: true }, 'fr-FR')).toContain(`Voir ou annuler : ${page}`);
  });

  it('a move of a booking still held says to finish it by when its hold lapses, not only where to see it', () => {
    const page = 'https://book.example/p/manage/AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_abcde';
    const moved: MessageFacts = { ...FACTS, kind: 'rescheduled', link: page, depositDue: null };
    const held = renderMessage({ ...moved, stillHeld: true });
    for (const text of [held.sms, held.text]) {
      expect(text).toContain('Moved: Full colour');
      expect(text).toContain(`Complete your booking by Monday 23 November at 9:30 GMT: ${page}`);
      expect(text).not.toContain('See, move or cancel it');
    }
    // Once it is booked, a move leads to its page as before.
    expect(renderMessage({ ...moved, stillHeld: false, holdExpiresAt: null }).sms).toContain(
      `See, move or cancel it: ${page}`,
    );
  });

  it('a cancellation says what became of a paid deposit and any late fee, in each language', () => {
    const cancelled: MessageFacts = {
      ...FACTS,
      kind: 'cancelled',
      link: null,
      holdExpiresAt: null,
      depositDue: null,
    };
    const kept = { ...cancelled, cancellation: { deposit: '£20.00', depositRefunded: false, fee: '£27.50' } };
    // The fee is recorded now and charged later by the salon (which may waive it): said as to come, as
    // the page ("to be charged") and MCP's cancel ("will be charged to the card on file") say it.
    expect(renderSms(kept)).toContain(
      'Your deposit of £20.00 is kept (late cancellation). A late-cancellation fee of £27.50 will be charged to your saved card.',
    );
    expect(renderSms({ ...kept, locale: 'fr-FR' })).toContain(
      "Des frais d'annulation tardive de £27.50 seront débités de votre carte enregistrée.",
    );
    expect(renderMessage(kept).html).toContain('<p>Your deposit of £20.00 is kept');
    const refunded = { ...cancelled, cancellation: { deposit: '£20.00', depositRefunded: true, fee: null } };
    expect(renderSms({ ...refunded, locale: 'de-DE' })).toContain(
      'Ihre Anzahlung von £20.00 wird erstattet.',
    );
    expect(renderSms({ ...refunded, locale: 'fr-FR' })).toContain('Votre acompte de £20.00 sera remboursé.');
    expect(renderSms(cancelled)).not.toMatch(/deposit|fee/);
  });

  it('keeps a late cancellation’s SMS within two segments in every language, with its money and its page’s link', () => {
    // A salon's own address, as PUBLIC_BASE_URL gives it: the link alone takes 88 characters.
    const page = 'https://bookings.northside-hair.co.uk/p/manage/AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_abcde';
    const late: MessageFacts = {
      ...FACTS,
      kind: 'cancelled',
      link: page,
      holdExpiresAt: null,
      depositDue: null,
      cancellation: { deposit: '£20.00', depositRefunded: false, fee: '£27.50' },
    };
    // In fewer words than the e-mail's where the link would not fit beside the long ones.
    const money: Record<string, string[]> = {
      'en-GB': ['Deposit £20.00 kept (late).', 'Late fee £27.50 to be charged to your card.'],
      'de-DE': [
        'Anzahlung £20.00 einbehalten (kurzfristig storniert).',
        'Stornogebühr £27.50 wird Ihrer Karte belastet.',
      ],
      'fr-FR': [
        'Acompte £20.00 conservé (annulation tardive).',
        'Frais de £27.50 à débiter sur votre carte.',
      ],
    };
    for (const [locale, said] of Object.entries(money)) {
      const sms = renderSms({ ...late, locale });
      expect(smsSegments(sms), `${locale}: ${sms}`).toBeLessThanOrEqual(2);
      for (const words of said) expect(sms, locale).toContain(words);
      expect(sms, locale).toContain(page);
      expect(sms, locale).toContain('NHC-7KQ2MX.');
    }
    // With a short link the usual words fit.
    const short = renderSms({
      ...late,
      link: 'https://book.example/p/manage/AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_abcde',
    });
    expect(short).toContain('Your deposit of £20.00 is kept (late cancellation).');
  });

  it('leaves direction controls out of names, so none turns the rest of a line backwards', () => {
    const hostile = { ...FACTS, clientFirstName: 'Jo\u202e', staffName: 'Amara\u2067 Okafor' };
    const rendered = renderMessage(hostile);
    for (const text of [rendered.sms, rendered.text, rendered.html, rendered.subject]) {
      expect(text).not.toMatch(/[\u202a-\u202e\u2066-\u2069]/);
    }
    expect(rendered.text).toMatch(/^Hello Jo,$/m);
    expect(rendered.sms).toContain('with Amara Okafor');
  });

  it('names the zone of a time the clocks show twice that day by what tells the two apart', () => {
    // London's clocks go back at 02:00 BST on 25 October 2026: 01:30 happens at 00:30Z and at 01:30Z.
    const at = (iso: string, kind: MessageFacts['kind'] = 'confirmed') =>
      renderSms({ ...FACTS, kind, link: null, holdExpiresAt: null, startsAt: Date.parse(iso) });
    expect(at('2026-10-25T00:30:00Z')).toContain('on Sunday 25 October at 1:30 BST,');
    expect(at('2026-10-25T01:30:00Z')).toContain('on Sunday 25 October at 1:30 GMT,');
    // Named once: the zone that tells them apart is the zone.
    expect(at('2026-10-25T01:30:00Z')).not.toContain('GMT GMT');
    expect(at('2026-10-25T03:30:00Z')).toContain('on Sunday 25 October at 3:30 GMT,');
    // The hold's end too; and in Sydney's words where the organisation is Australian.
    const held = renderSms({ ...FACTS, holdExpiresAt: Date.parse('2026-10-25T01:15:00Z') });
    expect(held).toContain('by Sunday 25 October at 1:15 GMT to confirm');
    const sydney = renderSms({
      ...FACTS,
      locale: 'en-AU',
      timezone: 'Australia/Sydney',
      kind: 'reminder',
      link: null,
      holdExpiresAt: null,
      startsAt: Date.parse('2027-04-03T15:30:00Z'),
    });
    expect(sydney).toMatch(/2:30 am AEDT,/);
  });

  it("names every time's zone as a person does: an abbreviation the locale's readers use, else its place", () => {
    const page = 'https://book.example/p/manage/AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_abcde';
    const confirmed = {
      ...FACTS,
      kind: 'confirmed' as const,
      link: page,
      holdExpiresAt: null,
      depositDue: null,
    };
    const when = (facts: Partial<MessageFacts>) => {
      const rendered = renderMessage({ ...confirmed, ...facts });
      return { sms: rendered.sms, text: rendered.text };
    };
    // London: GMT in winter, BST in summer, in the SMS and the e-mail alike.
    expect(when({}).sms).toContain('on Tuesday 8 December at 14:30 GMT, at Northside Camden.');
    expect(when({}).text).toContain('on Tuesday 8 December at 14:30 GMT, at Northside Camden.');
    expect(when({ startsAt: Date.parse('2026-07-07T13:30:00Z') }).sms).toContain(
      'Tuesday 7 July at 14:30 BST,',
    );
    // A British organisation's New York salon: en-GB has no letters for it ("GMT-5"), so its city.
    const newYork = when({ timezone: 'America/New_York', startsAt: Date.parse('2026-12-08T19:30:00Z') });
    expect(newYork.sms).toContain('Tuesday 8 December at 14:30 (New York time),');
    expect(newYork.text).toContain('Tuesday 8 December at 14:30 (New York time),');
    expect(newYork.sms).not.toMatch(/GMT/);
    // American English has letters for it; German ones for Berlin.
    expect(
      when({ locale: 'en-US', timezone: 'America/New_York', startsAt: Date.parse('2026-12-08T19:30:00Z') })
        .sms,
    ).toMatch(/December 8 at 2:30\sPM EST,/);
    expect(
      when({ locale: 'de-DE', timezone: 'Europe/Berlin', startsAt: Date.parse('2026-12-08T13:30:00Z') }).sms,
    ).toContain('am Dienstag, 8. Dezember um 14:30 MEZ,');
    // French writes Paris's as "UTC+1": its place, in French words (ICU's, France keeping one clock).
    expect(
      when({ locale: 'fr-FR', timezone: 'Europe/Paris', startsAt: Date.parse('2026-12-08T13:30:00Z') }).sms,
    ).toContain('le mardi 8 décembre à 14:30 (heure : France),');
  });

  it.each([
    ['de-AT', 'Europe/Vienna', 'Vienna', 'MEZ'],
    ['de-CH', 'Europe/Zurich', 'Zurich', 'MEZ'],
    ['es-ES', 'Atlantic/Canary', 'Canary', 'WET'],
    ['es-ES', 'Europe/Lisbon', 'Lisbon', 'WET'],
    ['es-US', 'America/New_York', 'New York', 'EST'],
  ])(
    'a %s page names %s’s clock as its messages do (%s), never by the English city',
    (locale, zone, city, abbr) => {
      const at = Date.parse('2026-11-24T10:00:00Z');
      const rendered = renderMessage({
        ...FACTS,
        kind: 'confirmed',
        holdExpiresAt: null,
        depositDue: null,
        locale,
        timezone: zone,
        startsAt: at,
      });
      expect(rendered.text).toMatch(new RegExp(` ${abbr}, (at|in) Northside Camden\\.`));
      expect(clockAfterTime(at, zone, locale)).toBe(abbr);
      expect(zoneTimeWords(at, zone, locale)).not.toContain(city);
    },
  );

  it("names a zone without an abbreviation by its place in the message's own language, as ICU names it", () => {
    // French and German have no letters for these zones here; their place is ICU's, in their words:
    // the city where its country keeps several clocks, the country (or territory) where it keeps one.
    const confirmed = { ...FACTS, kind: 'confirmed' as const, holdExpiresAt: null, depositDue: null };
    const named = (locale: string, timezone: string) => {
      const rendered = renderMessage({ ...confirmed, locale, timezone });
      // The e-mail and the SMS say the same.
      const zone = /\d (\([^)]*\)),/.exec(rendered.text)?.[1] ?? '';
      expect(rendered.sms).toContain(` ${toSmsAlphabet(zone)},`);
      return zone;
    };
    // A city: in French "heure de …" as French writes it, in German "Ortszeit …".
    expect(named('fr-FR', 'America/New_York')).toBe('(heure de New York)');
    expect(named('fr-FR', 'Europe/Moscow')).toBe('(heure de Moscou)');
    expect(named('fr-FR', 'Australia/Lord_Howe')).toBe('(heure de Lord Howe)');
    expect(named('de-DE', 'America/New_York')).toBe('(Ortszeit New York)');
    expect(named('de-DE', 'Europe/Moscow')).toBe('(Ortszeit Moskau)');
    expect(named('de-DE', 'America/Mexico_City')).toBe('(Ortszeit Mexiko-Stadt)');
    expect(named('de-DE', 'Australia/Lord_Howe')).toBe('(Ortszeit Lord Howe)');
    // A country with one clock: French takes ICU's own "heure : …" (it needs no article: du
    // Royaume-Uni, de l'Inde), German "Ortszeit …" as for a city.
    expect(named('fr-FR', 'Europe/London')).toBe('(heure : Royaume-Uni)');
    expect(named('fr-FR', 'Europe/Paris')).toBe('(heure : France)');
    expect(named('fr-FR', 'Asia/Kolkata')).toBe('(heure : Inde)');
    expect(named('de-DE', 'Europe/London')).toBe('(Ortszeit Vereinigtes Königreich)');
    expect(named('de-DE', 'Asia/Kolkata')).toBe('(Ortszeit Indien)');
    // A French name that would need its article or an elision ("des Açores", "d'Anchorage"): ICU's form.
    expect(named('fr-FR', 'Atlantic/Azores')).toBe('(heure : Açores)');
    expect(named('fr-FR', 'America/Anchorage')).toBe('(heure : Anchorage)');
    // Spanish: ICU's own "hora de …", for a city and a country alike.
    expect(named('es-ES', 'America/New_York')).toBe('(hora de Nueva York)');
    expect(named('es-ES', 'Europe/Moscow')).toBe('(hora de Moscú)');
    expect(named('es-ES', 'America/Mexico_City')).toBe('(hora de Ciudad de México)');
    expect(named('es-ES', 'Asia/Kolkata')).toBe('(hora de India)');
    // English keeps the city of the zone's name, which is English ("(Kolkata time)"); never English
    // names in French, German or Spanish.
    expect(named('en-GB', 'Asia/Kolkata')).toBe('(Kolkata time)');
    for (const zone of ['Europe/London', 'Asia/Kolkata', 'Europe/Moscow', 'America/Mexico_City']) {
      expect(named('fr-FR', zone)).not.toContain(zone.split('/')[1]!.replace('_', ' '));
      expect(named('de-DE', zone)).not.toMatch(/London|Kolkata|Moscow|Mexico City/);
    }
  });

  it("keeps the zone when an SMS must shorten: the city's words give way to the zone's short name", () => {
    // A cancellation's news (what, when, where) stays; with a kept deposit and a fee it is too long for
    // "(New York time)" even with every name cut short.
    const sms = renderSms({
      ...FACTS,
      kind: 'cancelled',
      link: 'https://book.example/p/manage/AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_abcde',
      holdExpiresAt: null,
      depositDue: null,
      timezone: 'America/New_York',
      startsAt: Date.parse('2026-12-08T19:30:00Z'),
      locationName: 'Northside Hair Brooklyn Heights Atlantic Avenue Studio',
      serviceNames: ['Balayage with toner and gloss treatment'],
      cancellation: { deposit: '£20.00', depositRefunded: false, fee: '£27.50' },
    });
    expect(smsSegments(sms)).toBeLessThanOrEqual(2);
    expect(sms).toContain('Cancelled: ');
    expect(sms).toContain('on Tuesday 8 December at 14:30 GMT-5, at ');
    // German, in London ("GMT+0" in de-DE), with euros (two GSM characters each).
    const de = renderSms({
      ...FACTS,
      locale: 'de-DE',
      kind: 'cancelled',
      holdExpiresAt: null,
      depositDue: null,
      cancellation: { deposit: '20,00 €', depositRefunded: true, fee: '27,50 €' },
    });
    expect(smsSegments(de)).toBeLessThanOrEqual(2);
    expect(de).toContain('am Dienstag, 8. Dezember um 14:30 GMT+0, in ');
    // Spanish, in New York: "(hora de Nueva York)" gives way to "GMT-5" as English's words do.
    const es = renderSms({
      ...FACTS,
      locale: 'es-ES',
      kind: 'cancelled',
      link: 'https://book.example/p/manage/AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_abcde',
      holdExpiresAt: null,
      depositDue: null,
      timezone: 'America/New_York',
      startsAt: Date.parse('2026-12-08T19:30:00Z'),
      locationName: 'Northside Hair Brooklyn Heights Atlantic Avenue Studio',
      serviceNames: ['Balayage with toner and gloss treatment'],
      cancellation: { deposit: '20,00 €', depositRefunded: false, fee: '27,50 €' },
    });
    expect(smsSegments(es)).toBeLessThanOrEqual(2);
    expect(es).toContain('martes, 8 de diciembre, 14:30 GMT-5, at ');
    const roomy = renderSms({
      ...FACTS,
      locale: 'es-ES',
      kind: 'reminder',
      link: null,
      timezone: 'America/New_York',
    });
    expect(smsSegments(roomy)).toBeLessThanOrEqual(2);
    expect(roomy).toContain('martes, 8 de diciembre, 9:30 (hora de Nueva York), at ');
  });

  it('says the year of a date in another year, and a repeated time by an abbreviation people read', () => {
    // A British organisation's New York salon, a year ahead, on the night the clocks go back.
    const sms = renderSms({
      ...FACTS,
      kind: 'confirmed',
      link: null,
      holdExpiresAt: null,
      timezone: 'America/New_York',
      startsAt: Date.parse('2027-11-07T06:30:00Z'),
      now: Date.parse('2026-11-23T09:00:00Z'),
    });
    expect(sms).toContain('on Sunday, 7 November 2027 at 1:30 EST');
    expect(sms).not.toContain('GMT-5');
    // This year's dates stay without it.
    expect(renderSms({ ...FACTS, now: Date.parse('2026-11-23T09:00:00Z') })).toContain(
      'on Tuesday 8 December at 14:30',
    );
  });

  it('keeps the zone of a repeated time in the SMS alphabet, so the SMS keeps its detail', () => {
    // Miquelon, French: its clocks go back at 02:00 UTC−2 on 1 November 2026; ICU names the two
    // offsets "UTC−2" and "UTC−3" with a minus sign outside the SMS alphabet.
    const miquelon = renderSms({
      ...FACTS,
      locale: 'fr-FR',
      timezone: 'America/Miquelon',
      kind: 'confirmed',
      link: null,
      holdExpiresAt: null,
      startsAt: Date.parse('2026-11-01T03:30:00Z'),
    });
    expect(miquelon).toContain('1:30 UTC-2');
    expect(miquelon).not.toMatch(/[\u2212\u202f\u00a0]/);
    expect(smsSegments(miquelon)).toBeLessThanOrEqual(2);
    expect(miquelon).toContain('avec Amara Okafor');
  });

  it("keeps the engine's own French words in the SMS alphabet, so an offer says what it offers", () => {
    const page = 'https://book.example/p/manage/AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_abcde';
    const fr = { ...FACTS, locale: 'fr-FR', link: page, depositDue: null };
    // A waitlist offer: "s’est" and "jusqu’à" made it UCS-2, and the SMS lost what time was offered.
    const offer = renderSms({ ...fr, kind: 'booking_page_link', waitlistOffer: true });
    expect(offer).toContain('Northside Hair : Un créneau s');
    // Its two times named by the zone's short name: "(heure : Royaume-Uni)" twice does not fit.
    expect(offer).toContain('Full colour le mardi 8 décembre à 14:30 UTC+0, à Northside Camden.');
    expect(smsSegments(offer)).toBeLessThanOrEqual(2);
    // "août": every French SMS in August was UCS-2, its names cut to a few letters.
    const august = renderMessage({ ...fr, kind: 'confirmed', startsAt: Date.parse('2026-08-07T11:30:00Z') });
    expect(august.sms).toContain(
      'Northside Hair : Réservé : Full colour avec Amara Okafor le vendredi 7 aout à 12:30',
    );
    expect(smsSegments(august.sms)).toBeLessThanOrEqual(2);
    // The e-mail keeps the month's own spelling.
    expect(august.text).toContain('vendredi 7 août à 12:30');
    // A code: "À confirmer" dropped what was booked from the French SMS.
    const code = renderSms({ ...fr, kind: 'verification_code', code: '042917', link: null });
    expect(code).toContain('Pour confirmer : Full colour avec Amara Okafor le mardi 8 décembre à 14:30');
    for (const sms of [offer, august.sms, code]) expect(sms).toBe(sms.replace(/[’‘ÀÂâêîôûÊÎÔÛ]/g, ''));
  });

  it('keeps money written in the locale ("10,00 €") in the SMS alphabet, so the SMS keeps its detail', () => {
    // Formatted as outbox-delivery.ts does: de-DE and fr-FR put a no-break space before the "€".
    const euros = (locale: string, minor: number) =>
      new Intl.NumberFormat(locale, { style: 'currency', currency: 'EUR' }).format(minor / 100);
    for (const locale of ['de-DE', 'fr-FR']) {
      const held = renderSms({ ...FACTS, locale, depositDue: euros(locale, 2000) });
      expect(held, locale).toMatch(/^Northside Hair ?: /);
      expect(held, locale).toContain('20,00 €');
      // What is held and when stay: the lead was dropped, the organisation's name cut to "Nor...".
      expect(held, locale).toMatch(/Full colour .*(am Dienstag, 8\. Dezember|le mardi 8 décembre)/);
      expect(smsSegments(held), locale).toBeLessThanOrEqual(2);
      const cancelled = renderSms({
        ...FACTS,
        locale,
        kind: 'cancelled',
        holdExpiresAt: null,
        depositDue: null,
        cancellation: { deposit: euros(locale, 2000), depositRefunded: true, fee: euros(locale, 2750) },
      });
      expect(cancelled, locale).toMatch(/(am Dienstag, 8\. Dezember|le mardi 8 décembre) \S+ 14:30/);
      expect(cancelled, locale).toContain('20,00 €');
      expect(cancelled, locale).toContain('27,50 €');
      expect(smsSegments(cancelled), locale).toBeLessThanOrEqual(2);
    }
    // The e-mail keeps the no-break space, which keeps the amount on one line.
    expect(renderMessage({ ...FACTS, locale: 'de-DE', depositDue: euros('de-DE', 2000) }).text).toContain(
      '20,00\u00a0€',
    );
  });

  it('keeps an SMS within two segments, dropping detail but never the link or the reference', () => {
    const long = {
      ...FACTS,
      serviceNames: ['Balayage with toner and gloss treatment', 'Restructuring keratin therapy', 'Blow-dry'],
      staffName: 'Maximiliane Oberhauser-Wittgenstein',
      locationName: 'Northside Hair Camden Market High Street',
    };
    const sms = renderSms(long);
    expect(smsSegments(sms)).toBeLessThanOrEqual(2);
    expect(sms).toContain(FACTS.link!);
    expect(sms).toContain('Ref NHC-7KQ2MX.');
    // Non-GSM characters make it UCS-2 (67 per part): still two segments at most.
    const unicode = renderSms({ ...long, organisationName: 'Salon Łódź ✂️' });
    expect(smsSegments(unicode)).toBeLessThanOrEqual(2);
  });

  it('cuts names short rather than lose the time, the link or the reference, however long the names', () => {
    // Catalogue names run to 200 characters; these, in UCS-2, leave no room in two parts of 67.
    const long = (word: string) => `${word} ${'Łódź '.repeat(40)}`.trim();
    const named = {
      ...FACTS,
      organisationName: long('Salon'),
      locationName: long('Studio'),
      serviceNames: [long('Colour'), 'Cut'],
      staffName: long('Ana'),
    };
    const page = 'https://book.example/p/manage/AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_abcde';
    for (const kind of ['confirmed', 'reminder', 'cancelled', 'rescheduled'] as const) {
      for (const link of [null, page]) {
        const sms = renderSms({ ...named, kind, link, holdExpiresAt: null });
        expect(smsSegments(sms), kind).toBeLessThanOrEqual(2);
        expect(sms, kind).toContain('Tuesday 8 December at 14:30');
        expect(sms, kind).toContain('Ref NHC-7KQ2MX.');
        if (link) expect(sms, kind).toContain(link);
      }
    }
    const held = renderSms(named);
    expect(smsSegments(held)).toBeLessThanOrEqual(2);
    expect(held).toContain(FACTS.link!);
    expect(held).toContain('Ref NHC-7KQ2MX.');
    // The organisation's name cut, marked as cut.
    expect(held).toMatch(/^Sal[^:]*\.\.\.: /);
  });

  it('says once what a change did to the later visits of a series, in each language, within two SMS parts', () => {
    const page = 'https://book.example/p/manage/AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_abcde';
    const base: MessageFacts = { ...FACTS, link: page, holdExpiresAt: null, depositDue: null };
    const booked = { following: 25, everyWeeks: 2, lastStartsAt: Date.parse('2027-11-23T14:30:00Z') };
    const expected: Record<string, Record<'cancelled' | 'rescheduled' | 'confirmed', string>> = {
      'en-GB': {
        cancelled: 'The 25 visits after it are cancelled too.',
        rescheduled: 'The 25 visits after it moved with it, each to 14:30.',
        confirmed:
          'Also booked: the 25 visits after it, every 2 weeks, the last on Tuesday, 23 November 2027.',
      },
      'de-DE': {
        cancelled: 'Die 25 Termine danach sind ebenfalls storniert.',
        rescheduled: 'Die 25 Termine danach wurden mitverschoben, jeweils auf 14:30.',
        confirmed:
          'Ebenfalls gebucht: die 25 Termine danach, alle 2 Wochen, der letzte am Dienstag, 23. November 2027.',
      },
      'fr-FR': {
        cancelled: 'Les 25 rendez-vous suivants sont aussi annulés.',
        rescheduled: 'Les 25 rendez-vous suivants sont aussi déplacés, chacun à 14:30.',
        confirmed:
          'Également réservés : les 25 rendez-vous suivants, toutes les 2 semaines, le dernier le mardi 23 novembre 2027.',
      },
    };
    for (const [locale, sentences] of Object.entries(expected)) {
      for (const kind of ['cancelled', 'rescheduled', 'confirmed'] as const) {
        const facts: MessageFacts = { ...base, locale, kind, series: booked, now: FACTS.holdExpiresAt! };
        const rendered = renderMessage(facts);
        expect(rendered.text, `${locale} ${kind}`).toContain(sentences[kind]);
        expect(smsSegments(rendered.sms), `${locale} ${kind}: ${rendered.sms}`).toBeLessThanOrEqual(2);
        expect(rendered.sms, `${locale} ${kind}`).toContain(toSmsAlphabet(sentences[kind]));
        expect(rendered.sms, `${locale} ${kind}`).toContain(page);
      }
    }
    // One visit after it; and nothing said of a series by a reminder or a message of one visit.
    expect(renderSms({ ...base, kind: 'cancelled', series: { following: 1 } })).toContain(
      'The visit after it is cancelled too.',
    );
    expect(
      renderSms({ ...base, kind: 'confirmed', series: { ...booked, following: 1, everyWeeks: 1 } }),
    ).toContain('Also booked: the visit after it, on Tuesday 23 November.');
    expect(renderSms({ ...base, kind: 'reminder', series: booked })).not.toContain('after it');
    expect(renderSms({ ...base, kind: 'cancelled', series: null })).not.toContain('after it');
  });

  it("names a new series' later visits in the message of the code that confirms them, in each language", () => {
    const verify = 'https://book.example/p/verify/AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_abcde';
    const base: MessageFacts = {
      ...FACTS,
      kind: 'verification_code',
      code: '042137',
      link: verify,
      depositDue: null,
      now: FACTS.holdExpiresAt!,
    };
    const series = { following: 2, everyWeeks: 3, lastStartsAt: Date.parse('2027-01-19T14:30:00Z') };
    const expected: Record<string, string> = {
      'en-GB': 'And the 2 visits after it, every 3 weeks, the last on Tuesday, 19 January 2027.',
      'de-DE': 'Dazu die 2 Termine danach, alle 3 Wochen, der letzte am Dienstag, 19. Januar 2027.',
      'fr-FR':
        'Ainsi que les 2 rendez-vous suivants, toutes les 3 semaines, le dernier le mardi 19 janvier 2027.',
    };
    for (const [locale, sentence] of Object.entries(expected)) {
      const rendered = renderMessage({ ...base, locale, series });
      expect(rendered.text, locale).toContain(sentence);
      // The SMS keeps its code and link first, within two parts, the series said where it fits.
      expect(rendered.sms, locale).toContain('042137');
      expect(rendered.sms, locale).toContain(verify);
      expect(smsSegments(rendered.sms), rendered.sms).toBeLessThanOrEqual(2);
    }
    expect(renderMessage({ ...base, series: { ...series, following: 1 } }).text).toContain(
      'And the visit after it, on Tuesday, 19 January 2027.',
    );
    expect(renderMessage({ ...base, series: null }).text).not.toContain('after it');
  });

  it("says which of a new series' later visits are with another stylist, where the message names its own", () => {
    const base: MessageFacts = { ...FACTS, kind: 'confirmed', holdExpiresAt: null, depositDue: null };
    const series = { following: 5, everyWeeks: 1, lastStartsAt: Date.parse('2027-01-12T14:30:00Z') };
    const said = (locale: string, following: number, visits: number, names: string[]) =>
      renderMessage({
        ...base,
        locale,
        series: { ...series, following, otherStaff: { visits, names } },
      }).text;
    expect(said('en-GB', 5, 2, ['Bo', 'Cy'])).toContain(
      'the last on Tuesday 12 January. 2 of them are with Bo or Cy.',
    );
    expect(said('en-GB', 5, 1, ['Bo'])).toContain('One of them is with Bo.');
    expect(said('en-GB', 5, 5, ['Bo'])).toContain('They are with Bo.');
    expect(said('en-GB', 1, 1, ['Bo'])).toContain('on Tuesday 12 January. It is with Bo.');
    expect(said('de-DE', 5, 2, ['Bo', 'Cy'])).toContain('2 davon sind bei Bo oder Cy.');
    expect(said('fr-FR', 5, 1, ['Bo'])).toContain("L'un d'eux est avec Bo.");
    // The SMS says it while it names the stylist at all, in the SMS alphabet; never without a series.
    const short = { ...base, organisationName: 'Hair', locationName: 'Camden', locationPhone: null };
    const sms = renderSms({ ...short, series: { ...series, otherStaff: { visits: 1, names: ['Seán'] } } });
    expect(sms).toContain(`${FACTS.serviceNames.join(', ')} with ${FACTS.staffName}`);
    expect(sms).toContain('One of them is with Sean.');
    expect(smsSegments(sms)).toBeLessThanOrEqual(2);
    expect(renderMessage({ ...base, series: null }).text).not.toContain('of them');
  });

  it('writes a French colon with its space before it, in every line, as its leads do', () => {
    const page = 'https://book.example/p/manage/AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_abcde';
    const fr = { ...FACTS, locale: 'fr-FR' };
    const kinds: MessageFacts[] = [
      fr,
      { ...fr, kind: 'reminder', link: page, holdExpiresAt: null, depositDue: null },
      { ...fr, kind: 'cancelled', link: page, holdExpiresAt: null, depositDue: null },
      { ...fr, kind: 'booking_page_link', link: page, depositDue: null },
      { ...fr, kind: 'verification_code', link: page, code: '123456', depositDue: null },
    ];
    for (const facts of kinds) {
      const { sms, text } = renderMessage(facts);
      // "pour confirmer: https", "Questions ou changements: +44": a colon stuck to its word, beside
      // "Rappel : " with its space, in the same message.
      for (const words of [sms, text]) expect(words, facts.kind).not.toMatch(/[^\s/]:\s/);
      expect(smsSegments(sms), facts.kind).toBeLessThanOrEqual(2);
    }
    expect(renderMessage(kinds[1]!).text).toContain(`Voir, déplacer ou annuler : ${page}`);
    expect(renderMessage(kinds[1]!).text).toContain('Questions ou changements : +442074850000');
    // English and German keep theirs as they write it.
    expect(renderMessage({ ...kinds[1]!, locale: 'de-DE' }).text).toContain('Fragen oder Änderungen: +44');
  });

  it("speaks the organisation's language and formats dates in its locale", () => {
    const de = renderMessage({ ...FACTS, kind: 'reminder', locale: 'de-DE', link: null, depositDue: null });
    expect(de.sms).toBe(
      'Northside Hair: Erinnerung: Full colour bei Amara Okafor am Dienstag, 8. Dezember um 14:30 (Ortszeit Vereinigtes Königreich), in Northside Camden. ' +
        'Nr. NHC-7KQ2MX. Fragen oder Änderungen: +442074850000',
    );
    expect(de.subject).toBe('Northside Hair: Erinnerung an Ihren Termin (NHC-7KQ2MX)');
    expect(de.text).toContain('Hallo Jo,');
    const html = renderMessage({ ...FACTS, organisationName: 'A <b> & co' }).html;
    expect(html).toContain('A &lt;b&gt; &amp; co');
    expect(html).toContain(`<a href="${FACTS.link}">`);
  });
});

describe('outbox rules', () => {
  it('counts segments as GSM-7 or UCS-2', () => {
    expect(smsSegments('a'.repeat(160))).toBe(1);
    expect(smsSegments('a'.repeat(161))).toBe(2);
    expect(smsSegments('€'.repeat(80))).toBe(1);
    expect(smsSegments('✂'.repeat(70))).toBe(1);
    expect(smsSegments('✂'.repeat(71))).toBe(2);
  });

  it('schedules the reminder only when its time is still ahead', () => {
    const start = Date.parse('2026-11-24T10:00:00Z');
    expect(reminderDueAt(start, 24, Date.parse('2026-11-23T09:00:00Z'))).toBe(
      Date.parse('2026-11-23T10:00:00Z'),
    );
    expect(reminderDueAt(start, 24, Date.parse('2026-11-23T10:00:00Z'))).toBeNull();
    expect(reminderDueAt(start, 0, 0)).toBeNull();
  });

  it('backs off exponentially up to an hour', () => {
    expect([1, 2, 3, 4, 20].map(retryDelayMs)).toEqual([30_000, 60_000, 120_000, 240_000, 3_600_000]);
  });

  it('says where a message went without reading the address out, nor any of an e-mail address', () => {
    expect(maskedRecipient('sms', '+447911123456')).toBe('the number ending 3456');
    expect(maskedRecipient('email', 'jo@example.com')).toBe('your e-mail at example.com');
    const notices = [
      { kind: 'payment_link' as const, channel: 'sms' as const, to: '+447911123456' },
      { kind: 'payment_link' as const, channel: 'email' as const, to: 'jo@example.com' },
    ];
    expect(sentSentence(notices)).toBe("I've sent the payment link to the number ending 3456 and by e-mail.");
    expect(sentSentence(notices, { brief: true })).toBe('Link sent to the number ending 3456 and by e-mail.');
    expect(sentSentence([])).toBe('');
  });
});

describe('the verification code message (design.md 9.1)', () => {
  const CODE: MessageFacts = {
    ...FACTS,
    kind: 'verification_code',
    clientFirstName: null,
    code: '042917',
    link: 'https://book.example/p/verify/0123456789abcdefghijklmnopqrstuvwxyzABCDEFG',
    holdExpiresAt: null,
    depositDue: null,
  };

  it('carries the code, the link and what to do if it was not you, and no name, in one SMS part or two', () => {
    const sms = renderSms(CODE);
    // Two parts hold it once the staff member and the salon's phone are left out, as any SMS shortens.
    expect(sms).toBe(
      'Northside Hair: To confirm: Full colour on Tuesday 8 December at 14:30 GMT, at Northside Camden. ' +
        'Your code is 042917 (valid 10 minutes). Or confirm here: https://book.example/p/verify/0123456789abcdefghijklmnopqrstuvwxyzABCDEFG ' +
        'Did not book? Ignore this message; nothing is booked in your name.',
    );
    expect(smsSegments(sms)).toBeLessThanOrEqual(2);
    const rendered = renderMessage(CODE);
    expect(rendered.subject).toBe('Northside Hair: Your booking code (NHC-7KQ2MX)');
    expect(rendered.text).toMatch(/^Hello,$/m);
    expect(rendered.html).toContain(`<a href="${CODE.link}">`);
  });

  it('in German and French too', () => {
    expect(renderSms({ ...CODE, locale: 'de-DE' })).toContain('Ihr Code lautet 042917 (gültig 10 Minuten)');
    expect(renderMessage({ ...CODE, locale: 'fr-FR' }).text).toContain('Votre code est 042917');
  });

  it('greets nobody by name when the name is one a stranger typed (null)', () => {
    const confirmed = renderMessage({ ...FACTS, kind: 'confirmed', clientFirstName: null, link: null });
    expect(confirmed.text.split('\n')[0]).toBe('Hello,');
    expect(confirmed.html).toContain('<p>Hello,</p>');
  });
});
