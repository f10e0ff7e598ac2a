// Stylesheets of the engineering pages (one-line diagram, charts), adopted as constructed stylesheets so that they
// travel with the code that needs them and need neither inline <style> (which the console's CSP forbids) nor
// a change to the shell's stylesheet.
const adopted = new Set<string>()

export function adoptStyles(key: string, css: string): void {
  if (adopted.has(key) || typeof CSSStyleSheet === 'undefined') return
  const sheet = new CSSStyleSheet()
  sheet.replaceSync(css)
  document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet]
  adopted.add(key)
}
