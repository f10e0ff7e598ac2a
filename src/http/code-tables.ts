/** `0 = Planned (…); 1 = …`: an integer code table as the description of an OpenAPI enumeration. */
export function describeCodes(codes: ReadonlyArray<{ code: number; name: string; description: string }>): string {
  return codes.map((c) => `${c.code} = ${c.name} (${c.description})`).join('; ')
}
