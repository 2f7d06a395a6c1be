import { MAX_SMS_SEGMENTS, type OutboxKind, type SeriesNote, smsSegments, toSmsAlphabet } from './outbox.ts';
import { CODE_VALID_MS } from './public-booking-policy.ts';
import { repeatedTimeLabel, zoneShortName } from './repeated-wall-times.ts';
import { withoutDirectionControls } from './text-rules.ts';
import { zoneClockName } from './zone-words.ts';

/**
 * The words of each message, per kind, in the organisation's language: an SMS (plain text, at most two
 * segments) and an e-mail (subject, text and HTML). They say what the spoken answers say: the
 * services, the staff member, the local date and time with the weekday, the location and its phone,
 * the reference, and the link with the time its hold ends when one is due. Every time names the zone
 * of the location's clock ("14:30 GMT", "14:30 (New York time)"): a customer reading it elsewhere, or
 * travelling, must not take it for their own clock's.
 */
export interface MessageFacts {
  kind: OutboxKind;
  organisationName: string;
  /** The organisation's locale (en-GB, de-DE, fr-FR, ...): the language and the date format. */
  locale: string;
  locationName: string;
  locationPhone: string | null;
  timezone: string;
  serviceNames: string[];
  staffName: string;
  /**
   * The client's first name, for the greeting; null for a public booking whose customer has not proven
   * the contact: a name a stranger typed is never sent to an address nobody proved (design.md 9.1).
   */
  clientFirstName: string | null;
  startsAt: number;
  reference: string;
  /**
   * The link the message carries: the checkout for a payment link, the verification page for a code,
   * and the booking's own page (/p/manage/{token}) for every other kind, so that a customer who closed
   * the tab finds the booking again from any message.
   */
  link: string | null;
  holdExpiresAt: number | null;
  /** The deposit due, formatted ("£20.00"), for a payment link. */
  depositDue: string | null;
  /** The code of a verification_code message (its link is `link`). */
  code?: string | null;
  /** A booking_page_link for a waitlist offer: a freed time held for the customer to claim. */
  waitlistOffer?: boolean;
  /**
   * What the customer may still do from the booking's page under the location's policy (a late move
   * or cancellation it forbids is not offered); both when absent.
   */
  changes?: { move: boolean; cancel: boolean };
  /**
   * The booking is still a hold (a deposit to pay, a card to save): a move of it says to finish it by
   * holdExpiresAt, not only where to see it, or a customer takes "Moved" for booked and it lapses.
   */
  stillHeld?: boolean;
  /** When the message is written: a date in another year than this one says its year. */
  now?: number;
  /**
   * A cancellation's money, formatted ("£20.00"): a paid deposit refunded or kept, and the
   * late-cancellation fee charged to the saved card; null each when there is none.
   */
  cancellation?: { deposit: string | null; depositRefunded: boolean; fee: string | null } | null;
  /**
   * A series' later visits booked, moved or cancelled by the same change (a confirmation, a move or a
   * cancellation), or held with the first visit for its code (a verification code).
   */
  series?: SeriesNote | null;
}

export interface RenderedMessage {
  /** Whose message it is, as an e-mail's From name: the organisation's, whoever's address sends it. */
  fromName: string;
  sms: string;
  subject: string;
  text: string;
  html: string;
}

/** The words of one language: each kind's headline and what it asks of the customer. */
interface Wording {
  subject: Record<OutboxKind, string>;
  /** The sentence saying what happened; {what} is the services, {when} the start. */
  lead: Record<OutboxKind, string>;
  /** The colon before what a line names (a link, a phone): French sets it off with a space, as its leads do. */
  colon: string;
  with: string;
  at: string;
  reference: string;
  questions: string;
  payBy: string;
  completeBy: string;
  /**
   * A waitlist offer's subject, lead and action (a booking_page_link whose first step is the claim):
   * the customer booked nothing, so "complete your booking" would not say what the message is.
   */
  offerSubject: string;
  offerLead: string;
  claimBy: string;
  /** The booking's page under a confirmation, a move or a reminder, and under a cancellation. */
  manage: string;
  /** The same where the location's policy allows no move now (late), or no cancellation, or neither. */
  manageNoMove: string;
  manageNoCancel: string;
  details: string;
  hello: string;
  /**
   * A cancellation's money: the paid deposit refunded or kept, a late-cancellation fee to be charged (it
   * is recorded with the cancellation and charged, or waived, by the salon afterwards).
   */
  depositRefunded: string;
  depositKept: string;
  feeCharged: string;
  /** The same, shorter: an SMS too long for its link says them so before it gives the link up. */
  shortMoney: { depositRefunded: string; depositKept: string; feeCharged: string };
  /** A verification code message: the code, the link's words, and what to do if it was not you. */
  code: string;
  orLink: string;
  notYou: string;
  /**
   * The later visits of a series the change took with it, [one visit, {n} visits]: cancelled too,
   * moved with it ({time}: the new time of day), booked with it ({every} its interval, {last} the
   * date of the last one).
   */
  seriesCancelled: [string, string];
  seriesMoved: [string, string];
  seriesBooked: [string, string];
  /** A new series' later visits, held with the first one that a verification code confirms. */
  seriesHeld: [string, string];
  everyWeeks: [string, string];
  /**
   * A new series' later visits with another stylist than the first ({names}: who, "Bo or Cy"): the
   * one later visit; all of several; one of several; {k} of several.
   */
  seriesOtherStaff: { it: string; all: string; one: string; some: string };
}

const EN: Wording = {
  subject: {
    confirmed: 'Your booking is confirmed',
    payment_link: 'Pay the deposit to confirm your booking',
    booking_page_link: 'Complete your booking',
    rescheduled: 'Your booking has moved',
    cancelled: 'Your booking is cancelled',
    reminder: 'Reminder of your appointment',
    verification_code: 'Your booking code',
  },
  lead: {
    confirmed: 'Booked: {what} on {when}',
    payment_link: 'Held for you: {what} on {when}',
    booking_page_link: 'Held for you: {what} on {when}',
    rescheduled: 'Moved: {what} is now on {when}',
    cancelled: 'Cancelled: {what} on {when}',
    reminder: 'Reminder: {what} on {when}',
    verification_code: 'To confirm: {what} on {when}',
  },
  colon: ': ',
  with: 'with',
  at: 'at',
  reference: 'Ref',
  questions: 'Questions or changes',
  payBy: 'Pay the deposit{amount} by {until} to confirm',
  completeBy: 'Complete your booking by {until}',
  offerSubject: 'A time has freed up for you',
  offerLead: 'A time has freed up for you: {what} on {when}',
  claimBy: 'Held for you until {until}; book it here',
  manage: 'See, move or cancel it',
  manageNoMove: 'See or cancel it',
  manageNoCancel: 'See or move it',
  details: 'Your booking',
  depositRefunded: 'Your deposit of {amount} will be refunded.',
  depositKept: 'Your deposit of {amount} is kept (late cancellation).',
  feeCharged: 'A late-cancellation fee of {amount} will be charged to your saved card.',
  shortMoney: {
    depositRefunded: 'Deposit {amount} to be refunded.',
    depositKept: 'Deposit {amount} kept (late).',
    feeCharged: 'Late fee {amount} to be charged to your card.',
  },
  hello: 'Hello',
  code: 'Your code is {code} (valid {minutes} minutes)',
  orLink: 'Or confirm here',
  notYou: 'Did not book? Ignore this message; nothing is booked in your name.',
  seriesCancelled: ['The visit after it is cancelled too.', 'The {n} visits after it are cancelled too.'],
  seriesMoved: [
    'The visit after it moved with it, to {time}.',
    'The {n} visits after it moved with it, each to {time}.',
  ],
  seriesBooked: [
    'Also booked: the visit after it, on {last}.',
    'Also booked: the {n} visits after it, {every}, the last on {last}.',
  ],
  seriesHeld: [
    'And the visit after it, on {last}.',
    'And the {n} visits after it, {every}, the last on {last}.',
  ],
  everyWeeks: ['every week', 'every {w} weeks'],
  seriesOtherStaff: {
    it: 'It is with {names}.',
    all: 'They are with {names}.',
    one: 'One of them is with {names}.',
    some: '{k} of them are with {names}.',
  },
};

const DE: Wording = {
  subject: {
    confirmed: 'Ihr Termin ist bestätigt',
    payment_link: 'Anzahlung leisten, um Ihren Termin zu bestätigen',
    booking_page_link: 'Schließen Sie Ihre Buchung ab',
    rescheduled: 'Ihr Termin wurde verschoben',
    cancelled: 'Ihr Termin wurde storniert',
    reminder: 'Erinnerung an Ihren Termin',
    verification_code: 'Ihr Buchungscode',
  },
  lead: {
    confirmed: 'Gebucht: {what} am {when}',
    payment_link: 'Für Sie reserviert: {what} am {when}',
    booking_page_link: 'Für Sie reserviert: {what} am {when}',
    rescheduled: 'Verschoben: {what} ist jetzt am {when}',
    cancelled: 'Storniert: {what} am {when}',
    reminder: 'Erinnerung: {what} am {when}',
    verification_code: 'Zu bestätigen: {what} am {when}',
  },
  colon: ': ',
  with: 'bei',
  at: 'in',
  reference: 'Nr.',
  questions: 'Fragen oder Änderungen',
  payBy: 'Bitte zahlen Sie die Anzahlung{amount} bis {until}',
  completeBy: 'Bitte schließen Sie die Buchung bis {until} ab',
  offerSubject: 'Ein Termin ist für Sie frei geworden',
  offerLead: 'Ein Termin ist für Sie frei geworden: {what} am {when}',
  claimBy: 'Für Sie reserviert bis {until}; hier buchen',
  manage: 'Ansehen, verschieben oder stornieren',
  manageNoMove: 'Ansehen oder stornieren',
  manageNoCancel: 'Ansehen oder verschieben',
  details: 'Ihre Buchung',
  depositRefunded: 'Ihre Anzahlung von {amount} wird erstattet.',
  depositKept: 'Ihre Anzahlung von {amount} wird einbehalten (späte Stornierung).',
  feeCharged: 'Eine Gebühr für späte Stornierung von {amount} wird Ihrer hinterlegten Karte belastet.',
  shortMoney: {
    depositRefunded: 'Anzahlung {amount} wird erstattet.',
    depositKept: 'Anzahlung {amount} einbehalten (kurzfristig storniert).',
    feeCharged: 'Stornogebühr {amount} wird Ihrer Karte belastet.',
  },
  hello: 'Hallo',
  code: 'Ihr Code lautet {code} (gültig {minutes} Minuten)',
  orLink: 'Oder hier bestätigen',
  notYou: 'Nicht gebucht? Ignorieren Sie diese Nachricht; nichts wird in Ihrem Namen gebucht.',
  seriesCancelled: [
    'Der Termin danach ist ebenfalls storniert.',
    'Die {n} Termine danach sind ebenfalls storniert.',
  ],
  seriesMoved: [
    'Der Termin danach wurde mitverschoben, auf {time}.',
    'Die {n} Termine danach wurden mitverschoben, jeweils auf {time}.',
  ],
  seriesBooked: [
    'Ebenfalls gebucht: der Termin danach, am {last}.',
    'Ebenfalls gebucht: die {n} Termine danach, {every}, der letzte am {last}.',
  ],
  seriesHeld: [
    'Dazu der Termin danach, am {last}.',
    'Dazu die {n} Termine danach, {every}, der letzte am {last}.',
  ],
  everyWeeks: ['jede Woche', 'alle {w} Wochen'],
  seriesOtherStaff: {
    it: 'Er ist bei {names}.',
    all: 'Sie sind bei {names}.',
    one: 'Einer davon ist bei {names}.',
    some: '{k} davon sind bei {names}.',
  },
};

const FR: Wording = {
  subject: {
    confirmed: 'Votre rendez-vous est confirmé',
    payment_link: "Réglez l'acompte pour confirmer votre rendez-vous",
    booking_page_link: 'Finalisez votre réservation',
    rescheduled: 'Votre rendez-vous a été déplacé',
    cancelled: 'Votre rendez-vous est annulé',
    reminder: 'Rappel de votre rendez-vous',
    verification_code: 'Votre code de réservation',
  },
  lead: {
    confirmed: 'Réservé : {what} le {when}',
    payment_link: 'Réservé pour vous : {what} le {when}',
    booking_page_link: 'Réservé pour vous : {what} le {when}',
    rescheduled: 'Déplacé : {what} est maintenant le {when}',
    cancelled: 'Annulé : {what} le {when}',
    reminder: 'Rappel : {what} le {when}',
    verification_code: 'Pour confirmer : {what} le {when}',
  },
  // A plain space: a no-break one (U+00A0, U+202F) would make every SMS UCS-2.
  colon: ' : ',
  with: 'avec',
  at: 'à',
  reference: 'Réf.',
  questions: 'Questions ou changements',
  payBy: "Réglez l'acompte{amount} avant {until} pour confirmer",
  completeBy: 'Finalisez la réservation avant {until}',
  // Apostrophes and capitals the SMS alphabet has: "’" or "À" made every such SMS UCS-2.
  offerSubject: "Un créneau s'est libéré pour vous",
  offerLead: "Un créneau s'est libéré pour vous : {what} le {when}",
  claimBy: "Réservé pour vous jusqu'à {until} ; réservez ici",
  manage: 'Voir, déplacer ou annuler',
  manageNoMove: 'Voir ou annuler',
  manageNoCancel: 'Voir ou déplacer',
  details: 'Votre réservation',
  depositRefunded: 'Votre acompte de {amount} sera remboursé.',
  depositKept: 'Votre acompte de {amount} est conservé (annulation tardive).',
  feeCharged: "Des frais d'annulation tardive de {amount} seront débités de votre carte enregistrée.",
  shortMoney: {
    depositRefunded: 'Acompte {amount} sera remboursé.',
    depositKept: 'Acompte {amount} conservé (annulation tardive).',
    feeCharged: 'Frais de {amount} à débiter sur votre carte.',
  },
  hello: 'Bonjour',
  code: 'Votre code est {code} (valable {minutes} minutes)',
  orLink: 'Ou confirmez ici',
  notYou: "Vous n'avez rien réservé ? Ignorez ce message ; rien n'est réservé à votre nom.",
  seriesCancelled: [
    'Le rendez-vous suivant est aussi annulé.',
    'Les {n} rendez-vous suivants sont aussi annulés.',
  ],
  seriesMoved: [
    'Le rendez-vous suivant est aussi déplacé, à {time}.',
    'Les {n} rendez-vous suivants sont aussi déplacés, chacun à {time}.',
  ],
  seriesBooked: [
    'Également réservé : le rendez-vous suivant, le {last}.',
    'Également réservés : les {n} rendez-vous suivants, {every}, le dernier le {last}.',
  ],
  seriesHeld: [
    'Ainsi que le rendez-vous suivant, le {last}.',
    'Ainsi que les {n} rendez-vous suivants, {every}, le dernier le {last}.',
  ],
  everyWeeks: ['chaque semaine', 'toutes les {w} semaines'],
  seriesOtherStaff: {
    it: 'Il est avec {names}.',
    all: 'Ils sont avec {names}.',
    one: "L'un d'eux est avec {names}.",
    some: "{k} d'entre eux sont avec {names}.",
  },
};

const WORDINGS: Record<string, Wording> = { en: EN, de: DE, fr: FR };

/** The wording of a locale's language; English for a language this version has no words for. */
function wordingFor(locale: string): Wording {
  return WORDINGS[locale.split('-')[0]!.toLowerCase()] ?? EN;
}

/**
 * "Tuesday 8 December at 14:30 GMT" in the locale, at the location's wall clock, its zone named the way
 * a person names it, as the pages do (zoneClockName: "MEZ", "(hora de Nueva York)"). A time the clock
 * shows twice that day (the clocks go back) is named by what tells the two apart, as on the pages: "1:30 BST" or "1:30 GMT", never a bare "1:30" the
 * customer cannot place. `compactZone`: the zone as short as the locale writes it ("GMT+1", "UTC+1"),
 * for an SMS the place's words would not fit.
 */
function localWhen(
  epochMs: number,
  zone: string,
  locale: string,
  options: { now?: number | undefined; compactZone?: boolean | undefined },
): string {
  // "Tuesday 8 December 2027": a booking a year ahead is not read as this December's.
  const { now } = options;
  const otherYear = now !== undefined && yearIn(zone, now) !== yearIn(zone, epochMs);
  const text = whenFormat(locale, zone, otherYear).format(epochMs);
  const named =
    repeatedTimeLabel(epochMs, zone, locale) ||
    (options.compactZone ? zoneShortName(epochMs, zone, locale) : zoneClockName(epochMs, zone, locale));
  return `${text} ${named}`.replace(ICU_TYPOGRAPHY, (c) => PLAIN[c]!);
}

/** What each format shows: the date and time of a visit, a date alone, a time of day alone. */
const FORMAT_OPTIONS = {
  when: { weekday: 'long', day: 'numeric', month: 'long', hour: 'numeric', minute: '2-digit' },
  day: { weekday: 'long', day: 'numeric', month: 'long' },
  time: { hour: 'numeric', minute: '2-digit' },
} satisfies Record<string, Intl.DateTimeFormatOptions>;

/**
 * The formats of localWhen, made once per locale, zone and year shown: making one (what luxon's
 * DateTime did on every message, with an offset computation besides) costs far more than formatting
 * with it, and the outbox worker renders every message. The text is the same: luxon's
 * toLocaleString formats with Intl.DateTimeFormat and these very options in the location's zone.
 * Bounded: a process serves few locales and zones, and at worst the cache starts again.
 */
const whenFormats = new Map<string, Intl.DateTimeFormat>();
const MAX_CACHED_FORMATS = 1_000;

function whenFormat(
  locale: string,
  zone: string,
  withYear: boolean,
  shows: keyof typeof FORMAT_OPTIONS = 'when',
): Intl.DateTimeFormat {
  const key = `${locale}|${zone}|${withYear}|${shows}`;
  let format = whenFormats.get(key);
  if (format === undefined) {
    if (whenFormats.size >= MAX_CACHED_FORMATS) whenFormats.clear();
    format = new Intl.DateTimeFormat(locale, {
      ...FORMAT_OPTIONS[shows],
      ...(withYear && { year: 'numeric' }),
      timeZone: zone,
    });
    whenFormats.set(key, format);
  }
  return format;
}

/** The (Gregorian) year at `epochMs` on the wall clocks of `zone`, as digits. */
function yearIn(zone: string, epochMs: number): string {
  const key = `year|${zone}`;
  let format = whenFormats.get(key);
  if (format === undefined) {
    if (whenFormats.size >= MAX_CACHED_FORMATS) whenFormats.clear();
    format = new Intl.DateTimeFormat('en-US-u-ca-gregory-nu-latn', { year: 'numeric', timeZone: zone });
    whenFormats.set(key, format);
  }
  return format.format(epochMs);
}

/**
 * ICU writes a minus sign (U+2212: "UTC−3" in French) and narrow or no-break spaces (newer ICU's
 * "9:30 AM", and money in most locales: "20,00 €" in German and French) where plain ones read the
 * same: any of them makes an SMS UCS-2, 67 characters a part instead of 153, and the staff member and
 * the phone were dropped to fit (a German deposit's SMS lost the appointment and ran to three parts).
 * The SMS is written without them; the e-mail keeps money's no-break space.
 */
const ICU_TYPOGRAPHY = /[\u2212\u202f\u00a0]/g;
const PLAIN: Record<string, string> = { '\u2212': '-', '\u202f': ' ', '\u00a0': ' ' };

/** The kinds about a booking already made: their link is the booking's page, to see or change it. */
const MANAGED_KINDS: ReadonlySet<OutboxKind> = new Set(['confirmed', 'rescheduled', 'reminder']);

/** The words before a confirmation's, a move's or a reminder's link: only what its page will allow. */
function manageWords(words: Wording, changes: MessageFacts['changes']): string {
  if (!changes || (changes.move && changes.cancel)) return words.manage;
  if (changes.cancel) return words.manageNoMove;
  return changes.move ? words.manageNoCancel : words.details;
}

/** The kinds whose link is the one thing asked of the customer: an SMS may drop what happened for it. */
const ASKING_KINDS: ReadonlySet<OutboxKind> = new Set([
  'payment_link',
  'booking_page_link',
  'verification_code',
]);

function fill(template: string, values: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (_, key: string) => values[key] ?? '');
}

/**
 * Each message's lines, in the order an SMS keeps them when it must shorten (first kept longest).
 * `sms`: the dates in the SMS alphabet ("août" as "aout"), the e-mail keeping the locale's spelling.
 */
function lines(
  facts: MessageFacts,
  words: Wording,
  options: {
    staff: boolean;
    services: string;
    sms?: boolean;
    compactZone?: boolean | undefined;
    shortMoney?: boolean | undefined;
  },
) {
  const dated = (epochMs: number) => {
    const text = localWhen(epochMs, facts.timezone, facts.locale, {
      now: facts.now,
      compactZone: options.compactZone,
    });
    return options.sms ? toSmsAlphabet(text) : text;
  };
  const when = dated(facts.startsAt);
  const what = options.staff ? `${options.services} ${words.with} ${facts.staffName}` : options.services;
  const template = facts.waitlistOffer ? words.offerLead : words.lead[facts.kind];
  const series = seriesSentence(facts, words, { sms: options.sms === true, staff: options.staff });
  const lead = `${fill(template, { what, when })}, ${words.at} ${facts.locationName}.${series ? ` ${series}` : ''}`;
  const until = facts.holdExpiresAt === null ? '' : dated(facts.holdExpiresAt);
  let action: string | null = null;
  if (facts.link && facts.kind === 'payment_link') {
    action = `${fill(words.payBy, { amount: facts.depositDue ? ` (${facts.depositDue})` : '', until })}${words.colon}${facts.link}`;
  } else if (facts.link && facts.kind === 'booking_page_link') {
    action = `${fill(facts.waitlistOffer ? words.claimBy : words.completeBy, { until })}${words.colon}${facts.link}`;
  } else if (facts.link && facts.kind === 'rescheduled' && facts.stillHeld && until !== '') {
    action = `${fill(words.completeBy, { until })}${words.colon}${facts.link}`;
  } else if (facts.kind === 'cancelled') {
    const { deposit = null, depositRefunded = false, fee = null } = facts.cancellation ?? {};
    const money = options.shortMoney ? words.shortMoney : words;
    // The link comes last: the e-mail's HTML makes the action's tail, the link, a link.
    const sentences = [
      deposit && fill(depositRefunded ? money.depositRefunded : money.depositKept, { amount: deposit }),
      fee && fill(money.feeCharged, { amount: fee }),
      facts.link && `${words.details}${words.colon}${facts.link}`,
    ].filter((sentence): sentence is string => Boolean(sentence));
    action = sentences.length > 0 ? sentences.join(' ') : null;
  } else if (facts.link && MANAGED_KINDS.has(facts.kind)) {
    action = `${manageWords(words, facts.changes)}${words.colon}${facts.link}`;
  } else if (facts.kind === 'verification_code' && facts.code) {
    const code = `${fill(words.code, { code: facts.code, minutes: String(CODE_VALID_MS / 60_000) })}.`;
    action = facts.link ? `${code} ${words.orLink}${words.colon}${facts.link}` : code;
  }
  // A code goes to a contact nobody has proven yet: it says what to do if it was not them.
  const reference =
    facts.kind === 'verification_code' ? words.notYou : `${words.reference} ${facts.reference}.`;
  const phone = facts.locationPhone ? `${words.questions}${words.colon}${facts.locationPhone}` : null;
  return { lead, action, reference, phone };
}

/**
 * What the change did to the series' later visits, said once in the message of the visit it was asked
 * of: cancelled too, moved with it to the same time of day, or (a new series' confirmation, or the
 * code that confirms it) booked or held with it, how often and until when. Null for a message of one
 * visit alone.
 */
function seriesSentence(
  facts: MessageFacts,
  words: Wording,
  { sms, staff }: { sms: boolean; staff: boolean },
): string | null {
  const note = facts.series;
  if (!note || note.following < 1) return null;
  const n = String(note.following);
  const said = ([one, several]: [string, string]) => (note.following === 1 ? one : several);
  const shown = (epochMs: number, shows: 'day' | 'time') => {
    const otherYear =
      shows === 'day' &&
      facts.now !== undefined &&
      yearIn(facts.timezone, facts.now) !== yearIn(facts.timezone, epochMs);
    const text = whenFormat(facts.locale, facts.timezone, otherYear, shows)
      .format(epochMs)
      .replace(ICU_TYPOGRAPHY, (c) => PLAIN[c]!);
    return sms ? toSmsAlphabet(text) : text;
  };
  if (facts.kind === 'cancelled') return fill(said(words.seriesCancelled), { n });
  if (facts.kind === 'rescheduled') {
    // The time of day of the move itself: the visit telling it may have moved alone since.
    const moved = fill(said(words.seriesMoved), { n, time: shown(note.movedTo ?? facts.startsAt, 'time') });
    // Each visit moves with its own stylist: where the message names the first's, the others say so.
    const others = staff ? otherStaffSentence(note, facts.locale, words, sms) : null;
    return others ? `${moved} ${others}` : moved;
  }
  const { everyWeeks, lastStartsAt } = note;
  const tellings: Partial<Record<OutboxKind, [string, string]>> = {
    confirmed: words.seriesBooked,
    verification_code: words.seriesHeld,
  };
  const told = tellings[facts.kind];
  if (!told || everyWeeks === undefined || lastStartsAt === undefined) return null;
  const every = fill(everyWeeks === 1 ? words.everyWeeks[0] : words.everyWeeks[1], { w: String(everyWeeks) });
  const booked = fill(said(told), { n, every, last: shown(lastStartsAt, 'day') });
  // Where the message names its stylist, the visits with someone else say so (an SMS short of room
  // drops both): "with Ana" alone would have the customer expect Ana every time.
  const others = staff ? otherStaffSentence(note, facts.locale, words, sms) : null;
  return others ? `${booked} ${others}` : booked;
}

/** "2 of them are with Bo or Cy.": a new series' later visits with another stylist than the first. */
function otherStaffSentence(note: SeriesNote, locale: string, words: Wording, sms: boolean): string | null {
  const others = note.otherStaff;
  if (!others) return null;
  const names = new Intl.ListFormat(locale, { type: 'disjunction' }).format(
    sms ? others.names.map(toSmsAlphabet) : others.names,
  );
  const { it, all, one, some } = words.seriesOtherStaff;
  const template =
    others.visits >= note.following ? (note.following === 1 ? it : all) : others.visits === 1 ? one : some;
  return fill(template, { names, k: String(others.visits) });
}

/**
 * The SMS: the organisation's name, what happened, the link when due, the reference and the
 * location's phone, within two segments. When that is too long the staff member goes first, then the
 * phone, then service names beyond the first, then the zone's words give way to its short name
 * ("(heure : Royaume-Uni)" to "UTC+0"), then (with a link) what happened; then the names are cut short,
 * longest allowance first. The link and the reference always stay, and so does the time and its zone,
 * but for a cancellation that does not fit even so: what became of its deposit and fee is said in fewer
 * words, and only then does its link to its page go (before the money, which it must say).
 */
export function renderSms(given: MessageFacts): string {
  // Names in the SMS alphabet, as the dates are: a "’" or an "á" typed into the catalogue made every
  // text UCS-2, its stylist and phone dropped and its names cut to a few letters to fit.
  const facts: MessageFacts = {
    ...given,
    organisationName: toSmsAlphabet(given.organisationName),
    locationName: toSmsAlphabet(given.locationName),
    serviceNames: given.serviceNames.map(toSmsAlphabet),
    staffName: toSmsAlphabet(given.staffName),
  };
  const words = wordingFor(facts.locale);
  const attempts: SmsShape[] = [
    { staff: true, services: 'all', phone: true },
    { staff: false, services: 'all', phone: true },
    { staff: false, services: 'all', phone: false },
    { staff: false, services: 'first', phone: false },
    { staff: false, services: 'first', phone: false, compactZone: true },
    // Long names in UCS-2 (67 characters a part): what is asked, the link and the reference.
    { staff: false, services: 'first', phone: false, lead: false, compactZone: true },
  ];
  for (const shape of attempts) {
    const text = smsText(facts, words, shape);
    if (smsSegments(text) <= MAX_SMS_SEGMENTS) return text;
  }
  const shortest: SmsShape = {
    staff: false,
    services: 'first',
    phone: false,
    lead: false,
    compactZone: true,
  };
  // Last, a cancellation says its money in fewer words, and only then gives up the link to its page,
  // its names as long as they then fit.
  const shapes =
    facts.kind === 'cancelled'
      ? [
          shortest,
          { ...shortest, shortMoney: true as const },
          { ...shortest, shortMoney: true as const, pageOfCancelled: false as const },
        ]
      : [shortest];
  let text = '';
  for (const shape of shapes) {
    for (const allowance of NAME_ALLOWANCES) {
      const cut = (name: string) => cutName(name, allowance);
      text = smsText(
        {
          ...facts,
          organisationName: cut(facts.organisationName),
          locationName: cut(facts.locationName),
          serviceNames: facts.serviceNames.map(cut),
        },
        words,
        shape,
      );
      if (smsSegments(text) <= MAX_SMS_SEGMENTS) return text;
    }
  }
  return text;
}

/** What an SMS attempt keeps: the staff member, all services or the first, the phone, what happened. */
interface SmsShape {
  staff: boolean;
  services: 'all' | 'first';
  phone: boolean;
  /**
   * false: with a link that asks something, leave out what happened (the link's own words say what to
   * do). A confirmation, a move, a reminder or a cancellation always keeps it: it is the news.
   */
  lead?: false;
  /** The zone by its short name ("GMT+0", "UTC+1") where the locale has no abbreviation for it. */
  compactZone?: true;
  /** A cancellation's money in its short words (Wording.shortMoney). */
  shortMoney?: true;
  /** false: a cancellation without the link to its page, its money kept (no other kind's link goes). */
  pageOfCancelled?: false;
}

function smsText(told: MessageFacts, words: Wording, shape: SmsShape): string {
  const facts = shape.pageOfCancelled === false && told.kind === 'cancelled' ? { ...told, link: null } : told;
  const services =
    shape.services === 'first' && facts.serviceNames.length > 1
      ? `${facts.serviceNames[0]} +${facts.serviceNames.length - 1}`
      : facts.serviceNames.join(', ');
  const parts = lines(facts, words, {
    staff: shape.staff,
    services,
    sms: true,
    compactZone: shape.compactZone,
    shortMoney: shape.shortMoney,
  });
  return [
    shape.lead === false && parts.action && ASKING_KINDS.has(facts.kind)
      ? `${facts.organisationName}${words.colon.trimEnd()}`
      : `${facts.organisationName}${words.colon}${parts.lead}`,
    parts.action,
    parts.reference,
    shape.phone ? parts.phone : null,
  ]
    .filter((part): part is string => part !== null)
    .join(' ')
    .replace(ICU_TYPOGRAPHY, (c) => PLAIN[c]!);
}

/**
 * The characters each name may keep when nothing else fits (organisation, location and services:
 * catalogue names run to 200 characters, and in UCS-2 two SMS parts hold 134).
 */
const NAME_ALLOWANCES = [40, 24, 12, 6];

/** The name cut to `allowance` characters (whole code points), "..." (in the SMS alphabet) marking the cut. */
function cutName(name: string, allowance: number): string {
  const chars = Array.from(name);
  return chars.length <= allowance
    ? name
    : `${chars
        .slice(0, allowance - 3)
        .join('')
        .trimEnd()}...`;
}

/**
 * The whole message: the SMS, and the e-mail as text and HTML. Names come without direction controls
 * (text-rules.ts): a client's name holding U+202E would turn the rest of its line backwards.
 */
export function renderMessage(given: MessageFacts): RenderedMessage {
  const facts: MessageFacts = {
    ...given,
    organisationName: withoutDirectionControls(given.organisationName),
    locationName: withoutDirectionControls(given.locationName),
    serviceNames: given.serviceNames.map(withoutDirectionControls),
    staffName: withoutDirectionControls(given.staffName),
    clientFirstName: given.clientFirstName && withoutDirectionControls(given.clientFirstName),
  };
  const words = wordingFor(facts.locale);
  const parts = lines(facts, words, { staff: true, services: facts.serviceNames.join(', ') });
  const greeting = facts.clientFirstName ? `${words.hello} ${facts.clientFirstName},` : `${words.hello},`;
  const body = [parts.lead, parts.action, parts.reference, parts.phone].filter(
    (part): part is string => part !== null,
  );
  const text = [greeting, '', ...body, '', facts.organisationName].join('\n');
  const link = facts.link ? escapeHtml(facts.link) : null;
  const html = [
    '<!doctype html><html><body>',
    `<p>${escapeHtml(greeting)}</p>`,
    `<p>${escapeHtml(parts.lead)}</p>`,
    parts.action && link
      ? `<p>${escapeHtml(parts.action.slice(0, parts.action.length - (facts.link ?? '').length))}<a href="${link}">${link}</a></p>`
      : parts.action
        ? `<p>${escapeHtml(parts.action)}</p>`
        : '',
    `<p>${escapeHtml(parts.reference)}</p>`,
    parts.phone ? `<p>${escapeHtml(parts.phone)}</p>` : '',
    `<p>${escapeHtml(facts.organisationName)}</p>`,
    '</body></html>',
  ].join('');
  return {
    fromName: facts.organisationName,
    sms: renderSms(facts),
    subject: `${facts.organisationName}${words.colon}${facts.waitlistOffer ? words.offerSubject : words.subject[facts.kind]} (${facts.reference})`,
    text,
    html,
  };
}

function escapeHtml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}
