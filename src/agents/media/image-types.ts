/** Image types agents accept (docs/agents.md, "Media"): the declared type must match the file's signature. */
export const ACCEPTED_IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/webp', 'image/gif', 'image/heic', 'image/heif'] as const;
export type ImageType = (typeof ACCEPTED_IMAGE_TYPES)[number];

const DECLARED_ALIASES: Readonly<Record<string, ImageType>> = { 'image/jpg': 'image/jpeg', 'image/pjpeg': 'image/jpeg' };

/** What file-type reports, folded onto the accepted types (APNG is a PNG; HEIF sequences are HEIF). */
const DETECTED: Readonly<Record<string, ImageType>> = {
  'image/png': 'image/png',
  'image/apng': 'image/png',
  'image/jpeg': 'image/jpeg',
  'image/webp': 'image/webp',
  'image/gif': 'image/gif',
  'image/heic': 'image/heic',
  'image/heic-sequence': 'image/heic',
  'image/heif': 'image/heif',
  'image/heif-sequence': 'image/heif',
};

/** The accepted type a declared MIME type names, or null. */
export function declaredImageType(declared: string): ImageType | null {
  const normalised = declared.trim().toLowerCase();
  const type = DECLARED_ALIASES[normalised] ?? normalised;
  return (ACCEPTED_IMAGE_TYPES as readonly string[]).includes(type) ? (type as ImageType) : null;
}

/** The accepted type the bytes really are, from their signature; null for anything else. */
export async function detectImageType(data: Buffer): Promise<ImageType | null> {
  // Loaded on first use: it takes a tenth of a second at start-up, and only agent media needs it.
  const { fileTypeFromBuffer } = await import('file-type');
  const detected = await fileTypeFromBuffer(data);
  return detected === undefined ? null : (DETECTED[detected.mime] ?? null);
}

/** HEIC is HEIF with HEVC coding, and files often carry either brand: the two are one family. */
export function typesMatch(declared: ImageType, detected: ImageType): boolean {
  const family = (type: ImageType) => (type === 'image/heic' ? 'image/heif' : type);
  return family(declared) === family(detected);
}
