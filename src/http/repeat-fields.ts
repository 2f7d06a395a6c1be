import { REPEAT_LIMITS, type Repeat } from '../domain/booking/series.ts';
import { AppError } from '../domain/errors.ts';

/**
 * The form fields that book a recurring series (design.md 9.5) on the public page and in the console:
 * "Repeat every N weeks" (or not at all) and how many visits in all.
 */
export function repeatFieldset(maxVisits: number = REPEAT_LIMITS.count.max): string {
  const { everyWeeks, count } = REPEAT_LIMITS;
  const weeks = Array.from({ length: everyWeeks.max - everyWeeks.min + 1 }, (_, i) => i + everyWeeks.min)
    .map((n) => `<option value="${n}">Every ${n === 1 ? 'week' : `${n} weeks`}</option>`)
    .join('');
  return `<fieldset><legend>Repeat</legend>
<label for="repeat_every_weeks">Repeat</label>
<select id="repeat_every_weeks" name="repeat_every_weeks"><option value="" selected>Does not repeat</option>${weeks}</select>
<label for="repeat_count">Visits in all, this one included (${count.min} to ${maxVisits})</label>
<input id="repeat_count" name="repeat_count" type="number" min="${count.min}" max="${maxVisits}" value="${Math.min(6, maxVisits)}">
</fieldset>`;
}

/** The series a form asks for, or undefined for one that does not repeat; 400 for numbers out of bounds. */
export function repeatOf(form: { repeat_every_weeks?: string; repeat_count?: string }): Repeat | undefined {
  if (!form.repeat_every_weeks) return undefined;
  const { everyWeeks, count } = REPEAT_LIMITS;
  const every = Number(form.repeat_every_weeks);
  const visits = Number(form.repeat_count);
  if (!Number.isInteger(every) || every < everyWeeks.min || every > everyWeeks.max) {
    throw new AppError(
      'invalid_request',
      `Repeat every ${everyWeeks.min} to ${everyWeeks.max} weeks.`,
      'repeat_every_weeks',
    );
  }
  if (!Number.isInteger(visits) || visits < count.min || visits > count.max) {
    throw new AppError(
      'invalid_request',
      `A series has ${count.min} to ${count.max} visits.`,
      'repeat_count',
    );
  }
  return { everyWeeks: every, count: visits };
}
