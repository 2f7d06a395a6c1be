import { zoneAbbreviation, zoneCity, zonePlace, zoneShortName } from './repeated-wall-times.ts';

/**
 * A zone's clock named by its place, in the words of the locale's language, for a time written in
 * that locale: "New York time", "Ortszeit Moskau", "heure : Royaume-Uni", "hora de Nueva York". The
 * messages put them in brackets after a time ("14:30 (hora de Nueva York)", where the locale has no
 * abbreviation people read); the hosted pages after each time and in the words above a day's times.
 * The place is ICU's (CLDR's generic location names, zonePlace): the city where its country keeps
 * several clocks, else the country whose one clock it is. A language with no words here gets English's.
 */
export function zoneTimeWords(epochMs: number, zone: string, locale: string): string {
  // No place in the language's words (ICU names the zone by an abbreviation there, "MEZ"): the zone
  // as short as the locale writes it, never the zone's English city in foreign words ("Ortszeit Vienna").
  return ZONE_TIME[zoneWordsLanguage(locale)](epochMs, zone, locale) ?? zoneShortName(epochMs, zone, locale);
}

/**
 * The zone of a time as the messages name it, and the pages after a time not in English: the locale's
 * abbreviation when it has one people read ("GMT", "BST", "MEZ", "EST"; short, which an SMS needs),
 * else the zone's place in the language's words in brackets ("(New York time)", "(Ortszeit Moskau)",
 * "(heure : France)", "(hora de Nueva York)"), never an offset ("UTC+1") a customer must work out
 * while ICU has a place for it.
 */
export function zoneClockName(epochMs: number, zone: string, locale: string): string {
  const abbreviation = zoneAbbreviation(epochMs, zone, locale);
  if (abbreviation !== null) return abbreviation;
  const place = ZONE_TIME[zoneWordsLanguage(locale)](epochMs, zone, locale);
  return place === null ? zoneShortName(epochMs, zone, locale) : `(${place})`;
}

/** The language zoneTimeWords speaks for `locale`: its own when it has words for it, else English. */
export function zoneWordsLanguage(locale: string): ZoneWordsLanguage {
  const language = locale.split('-')[0]!.toLowerCase();
  return language in ZONE_TIME ? (language as ZoneWordsLanguage) : 'en';
}

type ZoneWordsLanguage = 'en' | 'de' | 'fr' | 'es';

/** The words of a zone's place in each language; null where ICU gives no place for it in that locale. */
const ZONE_TIME: Record<ZoneWordsLanguage, (epochMs: number, zone: string, locale: string) => string | null> =
  {
    // English: the city of the zone's name, which is English ("Kolkata", "New York").
    en: (_epochMs, zone) => `${zoneCity(zone)} time`,
    de: (epochMs, zone, locale) => around('Ortszeit ', zonePlace(epochMs, zone, locale)?.name),
    fr: frenchZoneTime,
    // ICU's own Spanish form, "hora de {0}", for a city and a country alike ("hora de Nueva York",
    // "hora de Reino Unido"); the same text on Node 20, 22 and 24 (CLDR 44 to 48).
    es: (epochMs, zone, locale) => around('hora de ', zonePlace(epochMs, zone, locale)?.name),
  };

function around(before: string, name: string | undefined): string | null {
  return name === undefined ? null : `${before}${name}`;
}

/**
 * A zone in French by its place: a city as French says it, "heure de New York", "heure de Moscou"; a
 * country, or a name French writes with its article or elides ("du Royaume-Uni", "des Açores",
 * "d'Anchorage"), in ICU's own form, which needs neither: "heure : Royaume-Uni".
 */
function frenchZoneTime(epochMs: number, zone: string, locale: string): string | null {
  const place = zonePlace(epochMs, zone, locale);
  if (place === null) return null;
  const plainCity = !place.country && /^[B-DF-HJ-NP-TV-Z]/.test(place.name);
  return plainCity ? `heure de ${place.name}` : `heure : ${place.name}`;
}
