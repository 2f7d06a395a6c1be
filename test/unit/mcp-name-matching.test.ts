import { describe, expect, it } from 'vitest';
import { matchByName, normaliseForMatching } from '../../src/mcp/name-matching.ts';

describe('normaliseForMatching', () => {
  it('drops accents, lower-cases and splits on anything that is not a letter or digit', () => {
    expect(normaliseForMatching('Chloé Martin')).toEqual(['chloe', 'martin']);
    expect(normaliseForMatching('  SØREN   Ñúñez ')).toEqual(['søren', 'nunez']);
    expect(normaliseForMatching('Cut & blow-dry')).toEqual(['cut', 'and', 'blow', 'dry']);
    expect(normaliseForMatching('cut&blow dry')).toEqual(['cut', 'and', 'blow', 'dry']);
    expect(normaliseForMatching("O'Brien, 2nd floor")).toEqual(['o', 'brien', '2nd', 'floor']);
    expect(normaliseForMatching('  -- & ')).toEqual(['and']);
    expect(normaliseForMatching(' ... ')).toEqual([]);
    expect(normaliseForMatching('')).toEqual([]);
  });

  it('drops the filler words a caller wraps a name in', () => {
    expect(normaliseForMatching('a cut, please')).toEqual(['cut']);
    expect(normaliseForMatching('just my usual colour')).toEqual(['usual', 'colour']);
    expect(normaliseForMatching('The Barber Shop')).toEqual(['barber', 'shop']);
  });

  it('makes plurals singular, lightly', () => {
    expect(normaliseForMatching('nails lashes brushes beaches waxes glasses')).toEqual([
      'nail',
      'lash',
      'brush',
      'beach',
      'wax',
      'glass',
    ]);
    expect(normaliseForMatching('eyebrows highlights')).toEqual(['eyebrow', 'highlight']);
    expect(normaliseForMatching('beauties ties')).toEqual(['beauty', 'tie']);
    expect(normaliseForMatching('lotus iris glass gas')).toEqual(['lotus', 'iris', 'glass', 'gas']);
  });

  it('makes American spellings British, before and after the singular', () => {
    expect(normaliseForMatching('Color colors colour colours')).toEqual([
      'colour',
      'colour',
      'colour',
      'colour',
    ]);
    expect(normaliseForMatching('Gray center favorite')).toEqual(['grey', 'centre', 'favourite']);
    expect(normaliseForMatching('centers centres')).toEqual(['centre', 'centre']);
    expect(
      normaliseForMatching('Keratin straightening: personalize, personalizing, personalization'),
    ).toEqual(['keratin', 'straightening', 'personalise', 'personalising', 'personalisation']);
    expect(normaliseForMatching('organizations organisations')).toEqual(['organisation', 'organisation']);
  });
});

interface Service {
  id: string;
  name: string;
}

const services: Service[] = [
  { id: 'svc_cut', name: 'Cut & blow-dry' },
  { id: 'svc_full', name: 'Full colour' },
  { id: 'svc_consult', name: 'Colour consultation' },
  { id: 'svc_nails', name: 'Gel nails' },
  { id: 'svc_brows', name: 'Brow shaping' },
];
const describeService = (service: Service) => ({ id: service.id, names: [service.name] });

interface Staff {
  id: string;
  fullName: string;
}

const staff: Staff[] = [
  { id: 'stf_1', fullName: 'Amara Okafor' },
  { id: 'stf_2', fullName: 'Chloé Martin' },
  { id: 'stf_3', fullName: 'Chloe Dubois' },
  { id: 'stf_4', fullName: 'Sam Martin' },
];
const describeStaff = (member: Staff) => ({ id: member.id, names: [member.fullName] });

interface Location {
  id: string;
  name: string;
  slug: string;
}

const locations: Location[] = [
  { id: 'loc_soho', name: 'Soho Salon', slug: 'soho' },
  { id: 'loc_shoreditch', name: 'Shoreditch Studio', slug: 'east-london' },
];
const describeLocation = (location: Location) => ({ id: location.id, names: [location.name, location.slug] });

describe('matchByName', () => {
  it('takes an id, whatever its case and surrounding space, before any name', () => {
    expect(matchByName(' SVC_Consult ', services, describeService)).toEqual({
      kind: 'match',
      item: { id: 'svc_consult', name: 'Colour consultation' },
    });
    const named = [
      { id: 'a', name: 'Colour' },
      { id: 'colour', name: 'Something else' },
    ];
    expect(matchByName('colour', named, (item) => ({ id: item.id, names: [item.name] }))).toEqual({
      kind: 'match',
      item: { id: 'colour', name: 'Something else' },
    });
  });

  it('matches a whole name, word for word, before partial fits', () => {
    expect(matchByName('cut and blow dry', services, describeService)).toEqual({
      kind: 'match',
      item: { id: 'svc_cut', name: 'Cut & blow-dry' },
    });
    expect(matchByName('full color', services, describeService)).toEqual({
      kind: 'match',
      item: { id: 'svc_full', name: 'Full colour' },
    });
    const withPlain = [
      { id: 'a', name: 'Full colour' },
      { id: 'b', name: 'Colour' },
    ];
    expect(matchByName('Colours', withPlain, (item) => ({ id: item.id, names: [item.name] }))).toEqual({
      kind: 'match',
      item: { id: 'b', name: 'Colour' },
    });
  });

  it('matches any of the names, such as a slug', () => {
    expect(matchByName('east london', locations, describeLocation)).toEqual({
      kind: 'match',
      item: { id: 'loc_shoreditch', name: 'Shoreditch Studio', slug: 'east-london' },
    });
    expect(matchByName('soho', locations, describeLocation)).toEqual({
      kind: 'match',
      item: { id: 'loc_soho', name: 'Soho Salon', slug: 'soho' },
    });
  });

  it('reports several whole names that read the same as ambiguous', () => {
    const twins = [
      { id: 'a', name: 'Chloé Martin' },
      { id: 'b', name: 'chloe martin' },
    ];
    expect(matchByName('Chloe Martin', twins, (item) => ({ id: item.id, names: [item.name] }))).toEqual({
      kind: 'ambiguous',
      choices: [
        { id: 'a', name: 'Chloé Martin' },
        { id: 'b', name: 'chloe martin' },
      ],
    });
  });

  it('matches when every word of the query is a word of the name', () => {
    expect(matchByName('cut', services, describeService)).toEqual({
      kind: 'match',
      item: { id: 'svc_cut', name: 'Cut & blow-dry' },
    });
    expect(matchByName('amara', staff, describeStaff)).toEqual({
      kind: 'match',
      item: { id: 'stf_1', fullName: 'Amara Okafor' },
    });
    expect(matchByName('nail', services, describeService)).toEqual({
      kind: 'match',
      item: { id: 'svc_nails', name: 'Gel nails' },
    });
    expect(matchByName('brows', services, describeService)).toEqual({
      kind: 'match',
      item: { id: 'svc_brows', name: 'Brow shaping' },
    });
    expect(matchByName('chloe martin', staff, describeStaff)).toEqual({
      kind: 'match',
      item: { id: 'stf_2', fullName: 'Chloé Martin' },
    });
  });

  it('offers every item a partial word fit names, in the order given', () => {
    expect(matchByName('colour', services, describeService)).toEqual({
      kind: 'ambiguous',
      choices: [
        { id: 'svc_full', name: 'Full colour' },
        { id: 'svc_consult', name: 'Colour consultation' },
      ],
    });
    expect(matchByName('Chloé', staff, describeStaff)).toEqual({
      kind: 'ambiguous',
      choices: [
        { id: 'stf_2', fullName: 'Chloé Martin' },
        { id: 'stf_3', fullName: 'Chloe Dubois' },
      ],
    });
    expect(matchByName('martin', staff, describeStaff)).toEqual({
      kind: 'ambiguous',
      choices: [
        { id: 'stf_2', fullName: 'Chloé Martin' },
        { id: 'stf_4', fullName: 'Sam Martin' },
      ],
    });
  });

  it('falls back to word prefixes of at least three letters', () => {
    expect(matchByName('consult', services, describeService)).toEqual({
      kind: 'match',
      item: { id: 'svc_consult', name: 'Colour consultation' },
    });
    expect(matchByName('colour consult', services, describeService)).toEqual({
      kind: 'match',
      item: { id: 'svc_consult', name: 'Colour consultation' },
    });
    expect(matchByName('ama oka', staff, describeStaff)).toEqual({
      kind: 'match',
      item: { id: 'stf_1', fullName: 'Amara Okafor' },
    });
    expect(matchByName('col', services, describeService)).toEqual({
      kind: 'ambiguous',
      choices: [
        { id: 'svc_full', name: 'Full colour' },
        { id: 'svc_consult', name: 'Colour consultation' },
      ],
    });
    expect(matchByName('co', services, describeService)).toEqual({ kind: 'none' });
  });

  it('finds nothing for other words, an empty query or no items', () => {
    expect(matchByName('perm', services, describeService)).toEqual({ kind: 'none' });
    expect(matchByName('cut perm', services, describeService)).toEqual({ kind: 'none' });
    expect(matchByName('okafor martin', staff, describeStaff)).toEqual({ kind: 'none' });
    expect(matchByName('', services, describeService)).toEqual({ kind: 'none' });
    expect(matchByName('  - ', services, describeService)).toEqual({ kind: 'none' });
    expect(matchByName('cut', [], describeService)).toEqual({ kind: 'none' });
  });
});
