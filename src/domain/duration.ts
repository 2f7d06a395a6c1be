import { counted } from './counted.ts';

/** "45 minutes", "1 hour", "1 hour 15 minutes", "2 hours 30 minutes": readable aloud as well as on screen. */
export function describeDuration(totalMinutes: number): string {
  const hours = Math.floor(totalMinutes / 60);
  const minutes = totalMinutes % 60;
  const parts: string[] = [];
  if (hours > 0) parts.push(counted(hours, 'hour'));
  if (minutes > 0 || hours === 0) parts.push(counted(minutes, 'minute'));
  return parts.join(' ');
}
