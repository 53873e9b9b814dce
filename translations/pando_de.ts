<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="de_DE" sourcelanguage="en">
<context>
    <name>ActivityView</name>
    <message>
        <source>Activity</source>
        <translation>Aktivität</translation>
    </message>
    <message>
        <source>Clear</source>
        <translation>Leeren</translation>
    </message>
    <message>
        <source>Nothing has happened since Pando Desktop started. Deploys, runs, approvals and changes to apps show here as they happen.</source>
        <translation>Seit dem Start von Pando Desktop ist nichts passiert. Deploys, Läufe, Freigaben und Änderungen an Apps erscheinen hier, sobald sie geschehen.</translation>
    </message>
    <message>
        <source>Clear the activity</source>
        <translation>Aktivität leeren</translation>
    </message>
    <message>
        <source>%1: %2, %3</source>
        <translation>%1: %2, %3</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1: %2</translation>
    </message>
</context>
<context>
    <name>AppAddressesTab</name>
    <message>
        <source>Open %1</source>
        <translation>%1 öffnen</translation>
    </message>
    <message>
        <source>Always, on this machine</source>
        <translation>Immer, auf diesem Rechner</translation>
    </message>
    <message>
        <source>not routed yet</source>
        <translation>noch nicht geroutet</translation>
    </message>
    <message>
        <source>Refresh</source>
        <translation>Aktualisieren</translation>
    </message>
    <message>
        <source>Read the app&apos;s addresses again</source>
        <translation>Die Adressen der App neu lesen</translation>
    </message>
    <message>
        <source>%1 has no names yet. To serve it at a domain, list the names under route.domains in its spec (the Settings tab), for example &quot;route: {domains: [shop.example.com]}&quot;, and deploy it; or have an administrator set a base domain in Settings, which serves every app at APP.BASE-DOMAIN. Names need the Caddy edge.</source>
        <translation>%1 hat noch keine Namen. Um die App unter einer Domain zu bedienen, tragen Sie die Namen unter route.domains in ihre Spezifikation ein (Reiter Einstellungen), zum Beispiel &quot;route: {domains: [shop.example.com]}&quot;, und stellen Sie sie bereit; oder lassen Sie eine Administratorin in den Einstellungen eine Basis-Domain setzen, unter der jede App als APP.BASIS-DOMAIN erreichbar ist. Namen brauchen den Caddy-Edge.</translation>
    </message>
    <message>
        <source>Addresses of %1</source>
        <translation>Adressen von %1</translation>
    </message>
    <message>
        <source>moved: redirects to the app&apos;s current address</source>
        <translation>umgezogen: leitet zur aktuellen Adresse der App weiter</translation>
    </message>
    <message>
        <source>From this computer</source>
        <translation>Von diesem Computer aus</translation>
    </message>
    <message>
        <source>Only people signed in to Pando who may see %1 reach it, at every address: a browser is asked to sign in on the app&apos;s own name, and the app gets an X-Pando-Assertion header saying who is asking.</source>
        <translation>Nur bei Pando angemeldete Personen, die %1 sehen dürfen, erreichen die App, unter jeder Adresse: Ein Browser wird unter dem eigenen Namen der App zur Anmeldung aufgefordert, und die App erhält einen X-Pando-Assertion-Header, der sagt, wer anfragt.</translation>
    </message>
</context>
<context>
    <name>AppDetail</name>
    <message>
        <source>Select an app to see its details</source>
        <translation>Wählen Sie eine App, um ihre Details zu sehen</translation>
    </message>
    <message>
        <source>Deploy</source>
        <translation>Bereitstellen</translation>
    </message>
    <message>
        <source>Deploy the spec&apos;s ref again (Ctrl+D)</source>
        <translation>Den Ref der Spezifikation erneut bereitstellen (Strg+D)</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>Status</translation>
    </message>
    <message>
        <source>URL</source>
        <translation>URL</translation>
    </message>
    <message>
        <source>Ref</source>
        <translation>Ref</translation>
    </message>
    <message>
        <source>Last deploy</source>
        <translation>Letzte Bereitstellung</translation>
    </message>
    <message>
        <source>Overview</source>
        <translation>Übersicht</translation>
    </message>
    <message>
        <source>Deploys</source>
        <translation>Bereitstellungen</translation>
    </message>
    <message>
        <source>Logs</source>
        <translation>Protokolle</translation>
    </message>
    <message>
        <source>Remove %1?</source>
        <translation>%1 entfernen?</translation>
    </message>
    <message>
        <source>Remove</source>
        <translation>Entfernen</translation>
    </message>
    <message>
        <source>Remove…</source>
        <translation>Entfernen …</translation>
    </message>
    <message>
        <source>Its containers stop and its route goes. The repository is not touched.</source>
        <translation>Seine Container werden gestoppt und seine Route entfernt. Das Repository bleibt unberührt.</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1: %2</translation>
    </message>
    <message>
        <source>Settings</source>
        <translation>Einstellungen</translation>
    </message>
    <message>
        <source>Events</source>
        <translation>Ereignisse</translation>
    </message>
    <message>
        <source>Addresses</source>
        <translation>Adressen</translation>
    </message>
    <message>
        <source>Starting the forward through %1…</source>
        <translation>Weiterleitung über %1 wird gestartet…</translation>
    </message>
    <message>
        <source>Deploy on push</source>
        <translation>Deploy bei Push</translation>
    </message>
    <message>
        <source>Start</source>
        <translation>Starten</translation>
    </message>
    <message>
        <source>Run the serving version again</source>
        <translation>Die ausgelieferte Version wieder ausführen</translation>
    </message>
    <message>
        <source>Restart</source>
        <translation>Neu starten</translation>
    </message>
    <message>
        <source>Stop its container and start it again</source>
        <translation>Den Container anhalten und wieder starten</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>Anhalten</translation>
    </message>
    <message>
        <source>Stop it until it is started or deployed again</source>
        <translation>Anhalten, bis die App wieder gestartet oder bereitgestellt wird</translation>
    </message>
    <message>
        <source>Run</source>
        <translation>Ausführen</translation>
    </message>
</context>
<context>
    <name>AppEventsModel</name>
    <message>
        <source>App created</source>
        <translation>App erstellt</translation>
    </message>
    <message>
        <source>Spec changed</source>
        <translation>Spezifikation geändert</translation>
    </message>
    <message>
        <source>App removed</source>
        <translation>App entfernt</translation>
    </message>
    <message>
        <source>Started again</source>
        <translation>Wieder gestartet</translation>
    </message>
    <message>
        <source>Container restarted</source>
        <translation>Container neu gestartet</translation>
    </message>
    <message>
        <source>Container recreated</source>
        <translation>Container neu erstellt</translation>
    </message>
    <message>
        <source>Over its disk limit</source>
        <translation>Über ihrer Festplattengrenze</translation>
    </message>
    <message>
        <source>Secrets changed</source>
        <translation>Geheimnisse geändert</translation>
    </message>
    <message>
        <source>Unhealthy</source>
        <translation>Ungesund</translation>
    </message>
    <message>
        <source>Healthy again</source>
        <translation>Wieder gesund</translation>
    </message>
    <message>
        <source>Container removed</source>
        <translation>Container entfernt</translation>
    </message>
    <message>
        <source>Service removed</source>
        <translation>Dienst entfernt</translation>
    </message>
    <message>
        <source>Deploy started</source>
        <translation>Deployment gestartet</translation>
    </message>
    <message>
        <source>Deploy waits for approval</source>
        <translation>Deployment wartet auf Freigabe</translation>
    </message>
    <message>
        <source>Deploy succeeded</source>
        <translation>Deployment erfolgreich</translation>
    </message>
    <message>
        <source>Deploy failed</source>
        <translation>Deployment fehlgeschlagen</translation>
    </message>
    <message>
        <source>Deploy cancelled</source>
        <translation>Deployment abgebrochen</translation>
    </message>
    <message>
        <source>Approval requested</source>
        <translation>Freigabe angefordert</translation>
    </message>
    <message>
        <source>Approved</source>
        <translation>Freigegeben</translation>
    </message>
    <message>
        <source>Rejected</source>
        <translation>Abgelehnt</translation>
    </message>
    <message>
        <source>Approval expired</source>
        <translation>Freigabe abgelaufen</translation>
    </message>
    <message>
        <source>Webhook delivery</source>
        <translation>Webhook-Zustellung</translation>
    </message>
    <message>
        <source>Webhook secret replaced</source>
        <translation>Webhook-Geheimnis ersetzt</translation>
    </message>
    <message>
        <source>Stopped</source>
        <translation>Angehalten</translation>
    </message>
</context>
<context>
    <name>AppEventsTab</name>
    <message>
        <source>Newest first</source>
        <translation>Neueste zuerst</translation>
    </message>
    <message>
        <source>Refresh</source>
        <translation>Aktualisieren</translation>
    </message>
    <message>
        <source>Read the app&apos;s history again</source>
        <translation>Den Verlauf der App neu lesen</translation>
    </message>
    <message>
        <source>Nothing happened to %1 yet</source>
        <translation>Mit %1 ist noch nichts geschehen</translation>
    </message>
    <message>
        <source>Events of %1</source>
        <translation>Ereignisse von %1</translation>
    </message>
    <message>
        <source>%1, %2, by %3</source>
        <translation>%1, %2, von %3</translation>
    </message>
    <message>
        <source>unknown</source>
        <translation>unbekannt</translation>
    </message>
    <message>
        <source>Show older</source>
        <translation>Ältere anzeigen</translation>
    </message>
    <message>
        <source>Show the events of older deploys</source>
        <translation>Ereignisse älterer Deployments anzeigen</translation>
    </message>
</context>
<context>
    <name>AppHookTab</name>
    <message>
        <source>Make a new webhook secret for %1?</source>
        <translation>Neues Webhook-Geheimnis für %1 erzeugen?</translation>
    </message>
    <message>
        <source>Make new secret</source>
        <translation>Neues Geheimnis erzeugen</translation>
    </message>
    <message>
        <source>Deliveries signed with the old secret are refused from then on, until the forge has the new one. Pando shows the new secret once.</source>
        <translation>Mit dem alten Geheimnis signierte Zustellungen werden ab dann abgewiesen, bis die Forge das neue hat. Pando zeigt das neue Geheimnis einmal.</translation>
    </message>
    <message>
        <source>Pando makes a random secret and shows it once, to give the forge.</source>
        <translation>Pando erzeugt ein zufälliges Geheimnis und zeigt es einmal, um es der Forge zu geben.</translation>
    </message>
    <message>
        <source>Set the webhook secret of %1</source>
        <translation>Webhook-Geheimnis von %1 setzen</translation>
    </message>
    <message>
        <source>Set secret</source>
        <translation>Geheimnis setzen</translation>
    </message>
    <message>
        <source>The secret the forge has (GitLab&apos;s secret token, one set on the forge already): 16 to 256 visible characters, no spaces. Deliveries signed with the old one are refused from then on.</source>
        <translation>Das Geheimnis, das die Forge hat (GitLabs Secret Token, eines, das auf der Forge schon gesetzt ist): 16 bis 256 sichtbare Zeichen, keine Leerzeichen. Mit dem alten signierte Zustellungen werden ab dann abgewiesen.</translation>
    </message>
    <message>
        <source>secret</source>
        <translation>Geheimnis</translation>
    </message>
    <message>
        <source>Webhook secret</source>
        <translation>Webhook-Geheimnis</translation>
    </message>
    <message>
        <source>Deploys %1: %2</source>
        <translation>Deployt %1: %2</translation>
    </message>
    <message>
        <source>Deploys %1</source>
        <translation>Deployt %1</translation>
    </message>
    <message>
        <source>Refresh</source>
        <translation>Aktualisieren</translation>
    </message>
    <message>
        <source>Read the webhook and its deliveries again</source>
        <translation>Webhook und Zustellungen neu lesen</translation>
    </message>
    <message>
        <source>Pushes deploy nothing: auto-deploy is off for %1. To deploy what is pushed, set source.autodeploy: push in its spec (or poll, to have Pando look for new commits itself). The Settings tab does not edit it yet: pando apps spec %1 &gt; spec.yaml, add the line under source, then pando apps update %1 -f spec.yaml.</source>
        <translation>Pushes deployen nichts: Auto-Deploy ist für %1 aus. Um Gepushtes zu deployen, setze source.autodeploy: push in seiner Spec (oder poll, damit Pando selbst nach neuen Commits sieht). Der Reiter Einstellungen bearbeitet das noch nicht: pando apps spec %1 &gt; spec.yaml, die Zeile unter source ergänzen, dann pando apps update %1 -f spec.yaml.</translation>
    </message>
    <message>
        <source>%1. The webhook answers deliveries but deploys nothing while the app polls.</source>
        <translation>%1. Der Webhook beantwortet Zustellungen, deployt aber nichts, solange die App pollt.</translation>
    </message>
    <message>
        <source>Webhook</source>
        <translation>Webhook</translation>
    </message>
    <message>
        <source>Address</source>
        <translation>Adresse</translation>
    </message>
    <message>
        <source>reading…</source>
        <translation>wird gelesen…</translation>
    </message>
    <message>
        <source>Webhook address</source>
        <translation>Webhook-Adresse</translation>
    </message>
    <message>
        <source>Copy</source>
        <translation>Kopieren</translation>
    </message>
    <message>
        <source>Copy the webhook address</source>
        <translation>Webhook-Adresse kopieren</translation>
    </message>
    <message>
        <source>Secret</source>
        <translation>Geheimnis</translation>
    </message>
    <message>
        <source>New secret</source>
        <translation>Neues Geheimnis</translation>
    </message>
    <message>
        <source>Make a new random webhook secret</source>
        <translation>Neues zufälliges Webhook-Geheimnis erzeugen</translation>
    </message>
    <message>
        <source>Set secret…</source>
        <translation>Geheimnis setzen…</translation>
    </message>
    <message>
        <source>Set a webhook secret of your own</source>
        <translation>Eigenes Webhook-Geheimnis setzen</translation>
    </message>
    <message>
        <source>The new secret. Copy it into the forge now: Pando does not show it again.</source>
        <translation>Das neue Geheimnis. Kopiere es jetzt in die Forge: Pando zeigt es nicht noch einmal.</translation>
    </message>
    <message>
        <source>New webhook secret</source>
        <translation>Neues Webhook-Geheimnis</translation>
    </message>
    <message>
        <source>Copy the new webhook secret</source>
        <translation>Neues Webhook-Geheimnis kopieren</translation>
    </message>
    <message>
        <source>Done</source>
        <translation>Fertig</translation>
    </message>
    <message>
        <source>Hide the new webhook secret: it was copied</source>
        <translation>Neues Webhook-Geheimnis ausblenden: es wurde kopiert</translation>
    </message>
    <message>
        <source>Where each forge takes them</source>
        <translation>Wo jede Forge sie einträgt</translation>
    </message>
    <message>
        <source>Hide where each forge takes the address and the secret</source>
        <translation>Ausblenden, wo jede Forge Adresse und Geheimnis einträgt</translation>
    </message>
    <message>
        <source>Show where each forge takes the address and the secret</source>
        <translation>Zeigen, wo jede Forge Adresse und Geheimnis einträgt</translation>
    </message>
    <message>
        <source>&lt;b&gt;GitHub&lt;/b&gt;: repository → Settings → Webhooks → Add webhook: the address as Payload URL, content type application/json, the secret as Secret, just the push event.</source>
        <translation>&lt;b&gt;GitHub&lt;/b&gt;: Repository → Settings → Webhooks → Add webhook: die Adresse als Payload URL, Content type application/json, das Geheimnis als Secret, nur das Push-Ereignis.</translation>
    </message>
    <message>
        <source>&lt;b&gt;GitLab&lt;/b&gt;: project → Settings → Webhooks: the address as URL, the secret as Secret token, Push events (and Tag push events when the app follows tags).</source>
        <translation>&lt;b&gt;GitLab&lt;/b&gt;: Projekt → Settings → Webhooks: die Adresse als URL, das Geheimnis als Secret token, Push events (und Tag push events, wenn die App Tags folgt).</translation>
    </message>
    <message>
        <source>&lt;b&gt;Gitea, Forgejo&lt;/b&gt;: repository → Settings → Webhooks → Add webhook → Gitea (Forgejo): content type application/json, the secret as Secret, Push events.</source>
        <translation>&lt;b&gt;Gitea, Forgejo&lt;/b&gt;: Repository → Settings → Webhooks → Add webhook → Gitea (Forgejo): Content type application/json, das Geheimnis als Secret, Push events.</translation>
    </message>
    <message>
        <source>&lt;b&gt;Bitbucket&lt;/b&gt;: repository settings → Webhooks → Add webhook: the secret as Secret, trigger Repository push.</source>
        <translation>&lt;b&gt;Bitbucket&lt;/b&gt;: Repository settings → Webhooks → Add webhook: das Geheimnis als Secret, Trigger Repository push.</translation>
    </message>
    <message>
        <source>&lt;b&gt;Azure DevOps&lt;/b&gt;: project settings → Service hooks → Web Hooks, event Code pushed: the secret as the basic authentication password (any user name).</source>
        <translation>&lt;b&gt;Azure DevOps&lt;/b&gt;: Project settings → Service hooks → Web Hooks, Ereignis Code pushed: das Geheimnis als Passwort der Basic-Authentifizierung (beliebiger Benutzername).</translation>
    </message>
    <message>
        <source>Deliveries, newest first</source>
        <translation>Zustellungen, neueste zuerst</translation>
    </message>
    <message>
        <source>No deliveries yet</source>
        <translation>Noch keine Zustellungen</translation>
    </message>
    <message>
        <source>Webhook deliveries of %1</source>
        <translation>Webhook-Zustellungen von %1</translation>
    </message>
    <message>
        <source>%1: %2 %3 %4 %5, %6. %7</source>
        <translation>%1: %2 %3 %4 %5, %6. %7</translation>
    </message>
    <message>
        <source>%1 %2</source>
        <translation>%1 %2</translation>
    </message>
    <message>
        <source>https://pando.example.com</source>
        <translation>https://pando.example.com</translation>
    </message>
    <message>
        <source>The address the forge reaches this install at</source>
        <translation>Die Adresse, unter der die Forge diese Installation erreicht</translation>
    </message>
    <message>
        <source>Register on the forge</source>
        <translation>Bei der Forge registrieren</translation>
    </message>
    <message>
        <source>Register the webhook on the app&apos;s forge with a new secret</source>
        <translation>Den Webhook bei der Forge der App mit einem neuen Geheimnis registrieren</translation>
    </message>
    <message>
        <source>Through the app&apos;s source connection, with a new secret the forge and Pando share.</source>
        <translation>Über die Quellverbindung der App, mit einem neuen Geheimnis, das Forge und Pando teilen.</translation>
    </message>
    <message>
        <source>Forge</source>
        <translation>Forge</translation>
    </message>
    <message>
        <source>Remove the preview of pull request #%1?</source>
        <translation>Die Vorschau von Pull-Request #%1 entfernen?</translation>
    </message>
    <message>
        <source>Remove preview</source>
        <translation>Vorschau entfernen</translation>
    </message>
    <message>
        <source>Its app goes with its services&apos; data and volumes, as when the pull request closes. The next push to the pull request makes a new one.</source>
        <translation>Ihre App wird mit den Daten ihrer Dienste und Volumes entfernt, wie beim Schließen des Pull-Requests. Der nächste Push auf den Pull-Request erzeugt eine neue.</translation>
    </message>
    <message>
        <source>Previews</source>
        <translation>Vorschauen</translation>
    </message>
    <message>
        <source>No previews. With preview: true in the spec, each pull request to the app&apos;s branch gets an app of its own, built from its head and removed when it closes; the forge must send pull request events to the webhook.</source>
        <translation>Keine Vorschauen. Mit preview: true in der Spezifikation bekommt jeder Pull-Request auf den Branch der App eine eigene App, gebaut aus seinem Kopf und entfernt, wenn er geschlossen wird; die Forge muss Pull-Request-Ereignisse an den Webhook senden.</translation>
    </message>
    <message>
        <source>Pull request #%1, %2: preview %3, %4</source>
        <translation>Pull-Request #%1, %2: Vorschau %3, %4</translation>
    </message>
    <message>
        <source>#%1 %2</source>
        <translation>#%1 %2</translation>
    </message>
    <message>
        <source>%1 at %2 in %3. %4</source>
        <translation>%1 bei %2 in %3. %4</translation>
    </message>
    <message>
        <source>Open</source>
        <translation>Öffnen</translation>
    </message>
    <message>
        <source>Open the preview of pull request #%1</source>
        <translation>Die Vorschau von Pull-Request #%1 öffnen</translation>
    </message>
    <message>
        <source>Remove…</source>
        <translation>Entfernen…</translation>
    </message>
    <message>
        <source>Remove the preview of pull request #%1</source>
        <translation>Die Vorschau von Pull-Request #%1 entfernen</translation>
    </message>
</context>
<context>
    <name>AppRunTab</name>
    <message>
        <source>A command, e.g. ls -la /  or  sh -c &apos;env | sort&apos;</source>
        <translation>Ein Befehl, z. B. ls -la /  oder  sh -c &apos;env | sort&apos;</translation>
    </message>
    <message>
        <source>Command to run in the app&apos;s container</source>
        <translation>Befehl, der im Container der App ausgeführt wird</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>Anhalten</translation>
    </message>
    <message>
        <source>Run</source>
        <translation>Ausführen</translation>
    </message>
    <message>
        <source>Exited with 0</source>
        <translation>Mit 0 beendet</translation>
    </message>
    <message>
        <source>Exited with %1</source>
        <translation>Mit %1 beendet</translation>
    </message>
    <message>
        <source>What the command printed</source>
        <translation>Was der Befehl ausgegeben hat</translation>
    </message>
    <message>
        <source>Keep input open</source>
        <translation>Eingabe offen halten</translation>
    </message>
    <message>
        <source>Type the command&apos;s input below while it runs, a line at a time</source>
        <translation>Die Eingabe des Befehls unten eintippen, während er läuft, Zeile für Zeile</translation>
    </message>
    <message>
        <source>Runs in the container of the version the app serves now, without a terminal; it may read the app&apos;s secrets, so only people who may change the app can. For a program that needs a terminal, use: pando apps exec %1 -t -- sh</source>
        <translation>Läuft im Container der Version, die die App gerade ausliefert, ohne Terminal; er kann die Geheimnisse der App lesen, daher dürfen das nur Personen, die die App ändern dürfen. Für ein Programm, das ein Terminal braucht: pando apps exec %1 -t -- sh</translation>
    </message>
    <message>
        <source>Input for the command; Enter sends the line</source>
        <translation>Eingabe für den Befehl; Enter sendet die Zeile</translation>
    </message>
    <message>
        <source>A line of input for the running command</source>
        <translation>Eine Zeile Eingabe für den laufenden Befehl</translation>
    </message>
    <message>
        <source>End input</source>
        <translation>Eingabe beenden</translation>
    </message>
</context>
<context>
    <name>AppSettingsTab</name>
    <message>
        <source>Save these changes to %1?</source>
        <translation>Diese Änderungen an %1 speichern?</translation>
    </message>
    <message>
        <source>The spec as the engine has it (−) and as it will be (+). The next deploy runs it.</source>
        <translation>Die Spezifikation, wie die Engine sie hat (−) und wie sie sein wird (+). Das nächste Deployment verwendet sie.</translation>
    </message>
    <message>
        <source>Changes to the spec</source>
        <translation>Änderungen an der Spezifikation</translation>
    </message>
    <message>
        <source>Discard</source>
        <translation>Verwerfen</translation>
    </message>
    <message>
        <source>Discard the changes</source>
        <translation>Die Änderungen verwerfen</translation>
    </message>
    <message>
        <source>Review and save…</source>
        <translation>Prüfen und speichern…</translation>
    </message>
    <message>
        <source>Review the changes and save them</source>
        <translation>Die Änderungen prüfen und speichern</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1: %2</translation>
    </message>
    <message>
        <source>Environment</source>
        <translation>Umgebung</translation>
    </message>
    <message>
        <source>No variables. Secrets reach the app as variables of their own names.</source>
        <translation>Keine Variablen. Geheimnisse erreichen die App als Variablen ihres eigenen Namens.</translation>
    </message>
    <message>
        <source>NAME</source>
        <translation>NAME</translation>
    </message>
    <message>
        <source>Name of variable %1</source>
        <translation>Name der Variable %1</translation>
    </message>
    <message>
        <source>value</source>
        <translation>Wert</translation>
    </message>
    <message>
        <source>Value of variable %1</source>
        <translation>Wert der Variable %1</translation>
    </message>
    <message>
        <source>Remove</source>
        <translation>Entfernen</translation>
    </message>
    <message>
        <source>Remove variable %1</source>
        <translation>Variable %1 entfernen</translation>
    </message>
    <message>
        <source>Add variable</source>
        <translation>Variable hinzufügen</translation>
    </message>
    <message>
        <source>Resources</source>
        <translation>Ressourcen</translation>
    </message>
    <message>
        <source>Memory</source>
        <translation>Arbeitsspeicher</translation>
    </message>
    <message>
        <source>e.g. 256Mi; empty: the install&apos;s default</source>
        <translation>z. B. 256Mi; leer: Vorgabe der Installation</translation>
    </message>
    <message>
        <source>CPUs</source>
        <translation>CPUs</translation>
    </message>
    <message>
        <source>e.g. 0.5; empty: no limit</source>
        <translation>z. B. 0.5; leer: keine Grenze</translation>
    </message>
    <message>
        <source>Disk</source>
        <translation>Festplatte</translation>
    </message>
    <message>
        <source>e.g. 1Gi; empty: no limit</source>
        <translation>z. B. 1Gi; leer: keine Grenze</translation>
    </message>
    <message>
        <source>Past the disk limit</source>
        <translation>Über der Festplattengrenze</translation>
    </message>
    <message>
        <source>Restart</source>
        <translation>Neustart</translation>
    </message>
    <message>
        <source>Start again</source>
        <translation>Wieder starten</translation>
    </message>
    <message>
        <source>Health check</source>
        <translation>Zustandsprüfung</translation>
    </message>
    <message>
        <source>Path</source>
        <translation>Pfad</translation>
    </message>
    <message>
        <source>Health check path</source>
        <translation>Pfad der Zustandsprüfung</translation>
    </message>
    <message>
        <source>Time to become healthy</source>
        <translation>Zeit, um gesund zu werden</translation>
    </message>
    <message>
        <source>e.g. 60s</source>
        <translation>z. B. 60s</translation>
    </message>
    <message>
        <source>Between probes while starting</source>
        <translation>Zwischen Prüfungen beim Start</translation>
    </message>
    <message>
        <source>Between probes while serving</source>
        <translation>Zwischen Prüfungen im Betrieb</translation>
    </message>
    <message>
        <source>Failed probes before unhealthy</source>
        <translation>Fehlgeschlagene Prüfungen bis „ungesund“</translation>
    </message>
    <message>
        <source>Route and source</source>
        <translation>Route und Quelle</translation>
    </message>
    <message>
        <source>URL</source>
        <translation>URL</translation>
    </message>
    <message>
        <source>not routed yet</source>
        <translation>noch nicht geroutet</translation>
    </message>
    <message>
        <source>Stable port</source>
        <translation>Fester Port</translation>
    </message>
    <message>
        <source>empty: one is picked (now %1)</source>
        <translation>leer: einer wird gewählt (jetzt %1)</translation>
    </message>
    <message>
        <source>empty: one is picked</source>
        <translation>leer: einer wird gewählt</translation>
    </message>
    <message>
        <source>The app listens on</source>
        <translation>Die App lauscht auf</translation>
    </message>
    <message>
        <source>The port the app listens on</source>
        <translation>Der Port, auf dem die App lauscht</translation>
    </message>
    <message>
        <source>Ref</source>
        <translation>Ref</translation>
    </message>
    <message>
        <source>Branch, tag or commit to deploy</source>
        <translation>Branch, Tag oder Commit für das Deployment</translation>
    </message>
    <message>
        <source>Outgoing connections</source>
        <translation>Ausgehende Verbindungen</translation>
    </message>
    <message>
        <source>Secrets</source>
        <translation>Geheimnisse</translation>
    </message>
    <message>
        <source>Values are sealed on the install and never shown again; the app gets a change at its next deploy.</source>
        <translation>Werte werden in der Installation versiegelt und nie wieder angezeigt; die App erhält eine Änderung beim nächsten Deployment.</translation>
    </message>
    <message>
        <source>No secrets yet.</source>
        <translation>Noch keine Geheimnisse.</translation>
    </message>
    <message>
        <source>file %1, set %2</source>
        <translation>Datei %1, gesetzt %2</translation>
    </message>
    <message>
        <source>variable, set %1</source>
        <translation>Variable, gesetzt %1</translation>
    </message>
    <message>
        <source>Rotate…</source>
        <translation>Erneuern…</translation>
    </message>
    <message>
        <source>Set a new value for %1</source>
        <translation>Einen neuen Wert für %1 setzen</translation>
    </message>
    <message>
        <source>Remove secret %1</source>
        <translation>Geheimnis %1 entfernen</translation>
    </message>
    <message>
        <source>The spec asks for these secrets as files, and the next deploy fails until they are set: %1</source>
        <translation>Die Spezifikation verlangt diese Geheimnisse als Dateien, und das nächste Deployment schlägt fehl, bis sie gesetzt sind: %1</translation>
    </message>
    <message>
        <source>Secret name</source>
        <translation>Name des Geheimnisses</translation>
    </message>
    <message>
        <source>Secret value</source>
        <translation>Wert des Geheimnisses</translation>
    </message>
    <message>
        <source>Set secret</source>
        <translation>Geheimnis setzen</translation>
    </message>
    <message>
        <source>Services</source>
        <translation>Dienste</translation>
    </message>
    <message>
        <source>No services.</source>
        <translation>Keine Dienste.</translation>
    </message>
    <message>
        <source>%1: %2 %3, %4</source>
        <translation>%1: %2 %3, %4</translation>
    </message>
    <message>
        <source>The app reaches it through %1 (user %2, database %3); data in volume %4.</source>
        <translation>Die App erreicht ihn über %1 (Benutzer %2, Datenbank %3); Daten im Volume %4.</translation>
    </message>
    <message>
        <source>File for the backup of %1</source>
        <translation>Datei für die Sicherung von %1</translation>
    </message>
    <message>
        <source>Back up</source>
        <translation>Sichern</translation>
    </message>
    <message>
        <source>Back up %1</source>
        <translation>%1 sichern</translation>
    </message>
    <message>
        <source>Capacity of the install</source>
        <translation>Kapazität der Installation</translation>
    </message>
    <message>
        <source>%1 (default)</source>
        <translation>%1 (Vorgabe)</translation>
    </message>
    <message>
        <source>Not reachable: %1</source>
        <translation>Nicht erreichbar: %1</translation>
    </message>
    <message>
        <source>empty: the port the image exposes</source>
        <translation>leer: der Port, den das Image freigibt</translation>
    </message>
    <message>
        <source>Volumes</source>
        <translation>Volumes</translation>
    </message>
    <message>
        <source>No volumes: what the app writes goes with its container (run.volumes keeps files).</source>
        <translation>Keine Volumes: Was die App schreibt, geht mit ihrem Container (run.volumes behält Dateien).</translation>
    </message>
    <message>
        <source>%1 at %2, %3</source>
        <translation>%1 unter %2, %3</translation>
    </message>
    <message>
        <source>%1 at %2</source>
        <translation>%1 unter %2</translation>
    </message>
    <message>
        <source>File for the archive of volume %1</source>
        <translation>Datei für das Archiv des Volumes %1</translation>
    </message>
    <message>
        <source>Back up volume %1</source>
        <translation>Volume %1 sichern</translation>
    </message>
    <message>
        <source>Restore volume %1 of %2?</source>
        <translation>Volume %1 von %2 wiederherstellen?</translation>
    </message>
    <message>
        <source>Every file of the volume is replaced with those of %1. What the app wrote since that backup is lost. The app stops while it is restored and runs again on the restored files.</source>
        <translation>Jede Datei des Volumes wird durch die aus %1 ersetzt. Was die App seit dieser Sicherung geschrieben hat, geht verloren. Die App hält an, solange es wiederhergestellt wird, und läuft danach mit den wiederhergestellten Dateien weiter.</translation>
    </message>
    <message>
        <source>Archive to restore from (a backup of this volume)</source>
        <translation>Archiv, aus dem wiederhergestellt wird (eine Sicherung dieses Volumes)</translation>
    </message>
    <message>
        <source>Archive to restore volume %1 from</source>
        <translation>Archiv, aus dem Volume %1 wiederhergestellt wird</translation>
    </message>
    <message>
        <source>Restore…</source>
        <translation>Wiederherstellen…</translation>
    </message>
    <message>
        <source>Restore volume %1</source>
        <translation>Volume %1 wiederherstellen</translation>
    </message>
</context>
<context>
    <name>ApprovalDetail</name>
    <message>
        <source>Select a request to see what it will change</source>
        <translation>Wählen Sie eine Anfrage, um zu sehen, was sie ändern wird</translation>
    </message>
    <message>
        <source>waiting for approval</source>
        <translation>wartet auf Freigabe</translation>
    </message>
    <message>
        <source>Asked by %1, %2 · %3</source>
        <translation>Angefragt von %1, %2 · %3</translation>
    </message>
    <message>
        <source>Who may decide: %1</source>
        <translation>Wer entscheiden darf: %1</translation>
    </message>
    <message>
        <source>What will change</source>
        <translation>Was sich ändern wird</translation>
    </message>
    <message>
        <source>Comment (optional)</source>
        <translation>Kommentar (optional)</translation>
    </message>
    <message>
        <source>Approve</source>
        <translation>Freigeben</translation>
    </message>
    <message>
        <source>Reject</source>
        <translation>Ablehnen</translation>
    </message>
    <message>
        <source>Comment</source>
        <translation>Kommentar</translation>
    </message>
</context>
<context>
    <name>ApprovalsList</name>
    <message>
        <source>Approvals</source>
        <translation>Freigaben</translation>
    </message>
    <message>
        <source>Refresh</source>
        <translation>Aktualisieren</translation>
    </message>
    <message>
        <source>%1 · %2</source>
        <translation>%1 · %2</translation>
    </message>
    <message>
        <source>waiting</source>
        <translation>wartet</translation>
    </message>
    <message>
        <source>Refresh the requests</source>
        <translation>Anfragen aktualisieren</translation>
    </message>
    <message>
        <source>Requests waiting for approval</source>
        <translation>Anfragen, die auf Freigabe warten</translation>
    </message>
    <message>
        <source>%1, waiting for approval: %2</source>
        <translation>%1, wartet auf Freigabe: %2</translation>
    </message>
</context>
<context>
    <name>ApprovalsView</name>
    <message>
        <source>Nothing waits for approval</source>
        <translation>Nichts wartet auf Freigabe</translation>
    </message>
    <message>
        <source>Deploys held by the install&apos;s approval policy and pipeline steps that ask for a sign-off appear here, with what they will change. Someone other than the person who asked approves or rejects them.</source>
        <translation>Bereitstellungen, die die Freigaberichtlinie der Installation zurückhält, und Pipeline-Schritte, die eine Freigabe verlangen, erscheinen hier mit dem, was sie ändern werden. Freigeben oder ablehnen muss jemand anderes als die Person, die angefragt hat.</translation>
    </message>
</context>
<context>
    <name>AppsList</name>
    <message>
        <source>Apps</source>
        <translation>Apps</translation>
    </message>
    <message>
        <source>Refresh</source>
        <translation>Aktualisieren</translation>
    </message>
    <message>
        <source>New app</source>
        <translation>Neue App</translation>
    </message>
    <message>
        <source>Create an app from a repository or a spec file (Ctrl+N)</source>
        <translation>Eine App aus einem Repository oder einer Spec-Datei anlegen (Strg+N)</translation>
    </message>
    <message>
        <source>Refresh the apps</source>
        <translation>Apps aktualisieren</translation>
    </message>
    <message>
        <source>%1, %2</source>
        <translation>%1, %2</translation>
    </message>
</context>
<context>
    <name>CommandPalette</name>
    <message>
        <source>Go to an app, a pipeline, a view or an action…</source>
        <translation>Zu einer App, einer Pipeline, einer Ansicht oder einer Aktion…</translation>
    </message>
    <message>
        <source>Search</source>
        <translation>Suchen</translation>
    </message>
    <message>
        <source>Nothing matches “%1”.</source>
        <translation>Nichts passt zu „%1“.</translation>
    </message>
    <message>
        <source>Matches</source>
        <translation>Treffer</translation>
    </message>
    <message>
        <source>%1, %2</source>
        <translation>%1, %2</translation>
    </message>
</context>
<context>
    <name>ConfigTab</name>
    <message>
        <source>Version %1</source>
        <translation>Version %1</translation>
    </message>
    <message>
        <source>Change it with pando pipelines set; the desktop shows it read-only.</source>
        <translation>Mit pando pipelines set ändern; der Desktop zeigt sie nur an.</translation>
    </message>
    <message>
        <source>YAML</source>
        <translation>YAML</translation>
    </message>
    <message>
        <source>Last change</source>
        <translation>Letzte Änderung</translation>
    </message>
    <message>
        <source>The last change, as a diff</source>
        <translation>Die letzte Änderung als Diff</translation>
    </message>
    <message>
        <source>The pipeline&apos;s config</source>
        <translation>Die Konfiguration der Pipeline</translation>
    </message>
    <message>
        <source>Not changed since it was set first</source>
        <translation>Seit dem ersten Setzen nicht geändert</translation>
    </message>
    <message>
        <source>The last change to the config</source>
        <translation>Die letzte Änderung der Konfiguration</translation>
    </message>
</context>
<context>
    <name>ConnectionsView</name>
    <message>
        <source>Connections</source>
        <translation>Verbindungen</translation>
    </message>
    <message>
        <source>This computer runs its own engine. Remote installs — a pandod, or a teammate&apos;s desktop that serves its engine — are added with the pairing link their administrator sends you.</source>
        <translation>Dieser Computer betreibt seine eigene Engine. Entfernte Installationen — ein pandod oder der Desktop eines Teammitglieds, der seine Engine bereitstellt — fügen Sie mit dem Kopplungslink hinzu, den Ihnen deren Administrator schickt.</translation>
    </message>
    <message>
        <source>The install&apos;s certificate:</source>
        <translation>Das Zertifikat der Installation:</translation>
    </message>
    <message>
        <source>The engine inside this app: SQLite and the local Docker</source>
        <translation>Die Engine in dieser App: SQLite und das lokale Docker</translation>
    </message>
    <message>
        <source>%1 as %2 · certificate %3…</source>
        <translation>%1 als %2 · Zertifikat %3…</translation>
    </message>
    <message>
        <source>Shown now</source>
        <translation>Wird angezeigt</translation>
    </message>
    <message>
        <source>Switch</source>
        <translation>Wechseln</translation>
    </message>
    <message>
        <source>Remove</source>
        <translation>Entfernen</translation>
    </message>
    <message>
        <source>Add a remote install</source>
        <translation>Entfernte Installation hinzufügen</translation>
    </message>
    <message>
        <source>Pairing link</source>
        <translation>Kopplungslink</translation>
    </message>
    <message>
        <source>pando://host:port/pair?fp=…&amp;token=…</source>
        <translation>pando://host:port/pair?fp=…&amp;token=…</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>Name</translation>
    </message>
    <message>
        <source>optional; the host by default</source>
        <translation>optional; sonst der Hostname</translation>
    </message>
    <message>
        <source>Add</source>
        <translation>Hinzufügen</translation>
    </message>
    <message>
        <source>Pairing…</source>
        <translation>Wird gekoppelt…</translation>
    </message>
    <message>
        <source>%1, shown now</source>
        <translation>%1, jetzt angezeigt</translation>
    </message>
    <message>
        <source>Switch to %1</source>
        <translation>Zu %1 wechseln</translation>
    </message>
    <message>
        <source>Remove %1</source>
        <translation>%1 entfernen</translation>
    </message>
</context>
<context>
    <name>CreateAppDialog</name>
    <message>
        <source>New app</source>
        <translation>Neue App</translation>
    </message>
    <message>
        <source>From a repository</source>
        <translation>Aus einem Repository</translation>
    </message>
    <message>
        <source>From a spec file</source>
        <translation>Aus einer Spec-Datei</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>Name</translation>
    </message>
    <message>
        <source>hello</source>
        <translation>hello</translation>
    </message>
    <message>
        <source>Repository</source>
        <translation>Repository</translation>
    </message>
    <message>
        <source>https://git.example.com/you/hello.git</source>
        <translation>https://git.example.com/du/hello.git</translation>
    </message>
    <message>
        <source>Branch, tag or commit</source>
        <translation>Branch, Tag oder Commit</translation>
    </message>
    <message>
        <source>Port the app listens on</source>
        <translation>Port, auf dem die App lauscht</translation>
    </message>
    <message>
        <source>A YAML or JSON AppSpec, e.g. hello.yaml</source>
        <translation>Eine AppSpec in YAML oder JSON, z. B. hello.yaml</translation>
    </message>
    <message>
        <source>Choose…</source>
        <translation>Auswählen …</translation>
    </message>
    <message>
        <source>Deploy it now</source>
        <translation>Gleich deployen</translation>
    </message>
    <message>
        <source>Create</source>
        <translation>Anlegen</translation>
    </message>
    <message>
        <source>Choose an app spec</source>
        <translation>Eine App-Spec auswählen</translation>
    </message>
    <message>
        <source>App specs (*.yaml *.yml *.json)</source>
        <translation>App-Specs (*.yaml *.yml *.json)</translation>
    </message>
    <message>
        <source>All files (*)</source>
        <translation>Alle Dateien (*)</translation>
    </message>
    <message>
        <source>App spec file</source>
        <translation>App-Spec-Datei</translation>
    </message>
    <message>
        <source>Choose an app spec file</source>
        <translation>App-Spec-Datei auswählen</translation>
    </message>
    <message>
        <source>as the image exposes</source>
        <translation>wie im Image freigegeben</translation>
    </message>
    <message>
        <source>Branches</source>
        <translation>Branches</translation>
    </message>
    <message>
        <source>Choose one of the repository&apos;s branches</source>
        <translation>Einen der Branches des Repositorys wählen</translation>
    </message>
    <message>
        <source>The forge did not list the branches: %1</source>
        <translation>Die Forge hat die Branches nicht aufgelistet: %1</translation>
    </message>
    <message>
        <source>From an image</source>
        <translation>Aus einem Image</translation>
    </message>
    <message>
        <source>Image</source>
        <translation>Image</translation>
    </message>
    <message>
        <source>nginx:1.27 or registry.example.com/team/app:1.4</source>
        <translation>nginx:1.27 oder registry.example.com/team/app:1.4</translation>
    </message>
</context>
<context>
    <name>DeployState</name>
    <message>
        <source>succeeded</source>
        <translation>erfolgreich</translation>
    </message>
    <message>
        <source>in progress</source>
        <translation>in Arbeit</translation>
    </message>
    <message>
        <source>waiting for approval</source>
        <translation>wartet auf Freigabe</translation>
    </message>
    <message>
        <source>failed</source>
        <translation>fehlgeschlagen</translation>
    </message>
    <message>
        <source>skipped</source>
        <translation>übersprungen</translation>
    </message>
    <message>
        <source>cancelled</source>
        <translation>abgebrochen</translation>
    </message>
    <message>
        <source>not started</source>
        <translation>nicht gestartet</translation>
    </message>
</context>
<context>
    <name>DeploysView</name>
    <message>
        <source>%1 ms</source>
        <translation>%1 ms</translation>
    </message>
    <message>
        <source>%1 s</source>
        <translation>%1 s</translation>
    </message>
    <message>
        <source>%1 min %2 s</source>
        <translation>%1 min %2 s</translation>
    </message>
    <message>
        <source>%1 was never deployed</source>
        <translation>%1 wurde nie bereitgestellt</translation>
    </message>
    <message>
        <source>%1 · %2</source>
        <translation>%1 · %2</translation>
    </message>
    <message>
        <source>%1 · %2 · %3</source>
        <translation>%1 · %2 · %3</translation>
    </message>
    <message>
        <source>✖ %1 failed: %2</source>
        <translation>✖ %1 fehlgeschlagen: %2</translation>
    </message>
    <message>
        <source>✖ %1</source>
        <translation>✖ %1</translation>
    </message>
    <message>
        <source>What to do: %1</source>
        <translation>Was zu tun ist: %1</translation>
    </message>
    <message>
        <source>waiting for approval %1</source>
        <translation>wartet auf Freigabe %1</translation>
    </message>
    <message>
        <source>Deploy durations</source>
        <translation>Deploy-Dauer</translation>
    </message>
    <message>
        <source>succeeded</source>
        <translation>erfolgreich</translation>
    </message>
    <message>
        <source>failed</source>
        <translation>fehlgeschlagen</translation>
    </message>
    <message>
        <source>Commit %1</source>
        <translation>Commit %1</translation>
    </message>
    <message>
        <source>Redeploy this version</source>
        <translation>Diese Version erneut deployen</translation>
    </message>
    <message>
        <source>Deploy commit %1 again, whatever its ref points at now (Ctrl+Shift+D)</source>
        <translation>Commit %1 erneut deployen, egal worauf seine Ref jetzt zeigt (Strg+Umschalt+D)</translation>
    </message>
    <message>
        <source>Deploys</source>
        <translation>Bereitstellungen</translation>
    </message>
    <message>
        <source>Steps</source>
        <translation>Schritte</translation>
    </message>
    <message>
        <source>%1: %2, %3</source>
        <translation>%1: %2, %3</translation>
    </message>
    <message numerus="yes">
        <source>Output: %n line(s)</source>
        <translation>
            <numerusform>Ausgabe: %n Zeile</numerusform>
            <numerusform>Ausgabe: %n Zeilen</numerusform>
        </translation>
    </message>
    <message>
        <source>Output of the selected step</source>
        <translation>Ausgabe des gewählten Schritts</translation>
    </message>
    <message>
        <source>Cancel deploy</source>
        <translation>Deploy abbrechen</translation>
    </message>
    <message>
        <source>Stop this deploy and remove what it started; the version serving now stays</source>
        <translation>Diesen Deploy anhalten und entfernen, was er gestartet hat; die laufende Version bleibt</translation>
    </message>
</context>
<context>
    <name>EmptyState</name>
    <message>
        <source>Deploy your first app</source>
        <translation>Stellen Sie Ihre erste App bereit</translation>
    </message>
    <message>
        <source>Pando builds an app from a git repository and runs it on this computer&apos;s Docker engine. There are two ways to start:</source>
        <translation>Pando baut eine App aus einem Git-Repository und führt sie auf der Docker-Engine dieses Computers aus. Es gibt zwei Wege, anzufangen:</translation>
    </message>
    <message>
        <source>&lt;b&gt;From a spec file&lt;/b&gt;: &lt;tt&gt;pando apps create -f hello.yaml&lt;/tt&gt;, then &lt;tt&gt;pando deploy hello&lt;/tt&gt;. The app appears here and its deploy shows live.</source>
        <translation>&lt;b&gt;Aus einer Spezifikationsdatei&lt;/b&gt;: &lt;tt&gt;pando apps create -f hello.yaml&lt;/tt&gt;, dann &lt;tt&gt;pando deploy hello&lt;/tt&gt;. Die App erscheint hier, und ihre Bereitstellung ist live zu sehen.</translation>
    </message>
    <message>
        <source>&lt;b&gt;From a repository URL&lt;/b&gt;: name the app, give the repository and the port the app listens on; Pando writes the spec.</source>
        <translation>&lt;b&gt;Aus einer Repository-URL&lt;/b&gt;: App benennen, Repository und den Port angeben, auf dem die App lauscht; Pando schreibt die Spec.</translation>
    </message>
    <message>
        <source>From a repository…</source>
        <translation>Aus einem Repository …</translation>
    </message>
    <message>
        <source>From a spec file…</source>
        <translation>Aus einer Spec-Datei …</translation>
    </message>
</context>
<context>
    <name>JobsTab</name>
    <message numerus="yes">
        <source>%n stage(s): a job runs with what the jobs before it passed</source>
        <translation>
            <numerusform>%n Stufe: ein Job läuft mit dem, was die Jobs vor ihm durchlaufen hat</numerusform>
            <numerusform>%n Stufen: ein Job läuft mit dem, was die Jobs vor ihm durchlaufen hat</numerusform>
        </translation>
    </message>
    <message>
        <source>No job waits for another (no passed: in the config)</source>
        <translation>Kein Job wartet auf einen anderen (kein passed: in der Konfiguration)</translation>
    </message>
    <message>
        <source>%1, %2, %3</source>
        <translation>%1, %2, %3</translation>
    </message>
    <message>
        <source>Trigger</source>
        <translation>Starten</translation>
    </message>
    <message>
        <source>Trigger %1</source>
        <translation>%1 starten</translation>
    </message>
    <message>
        <source>The pipeline is paused; unpause it to start runs</source>
        <translation>Die Pipeline ist pausiert; zum Starten von Läufen fortsetzen</translation>
    </message>
    <message>
        <source>Jobs of the pipeline and what feeds each</source>
        <translation>Jobs der Pipeline und welche Jobs jeden speisen</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1: %2</translation>
    </message>
    <message>
        <source>%1: %2; not started by hand (disable_manual_trigger): its resources start it</source>
        <translation>%1: %2; wird nicht von Hand gestartet (disable_manual_trigger): seine Ressourcen starten ihn</translation>
    </message>
    <message>
        <source>Run all steps</source>
        <translation>Alle Schritte ausführen</translation>
    </message>
    <message>
        <source>Trigger %1, running every step</source>
        <translation>%1 starten, mit allen Schritten</translation>
    </message>
    <message>
        <source>Start a run of %1 (right-click or Shift+Enter: run every step again, also those unchanged since a run that succeeded)</source>
        <translation>Einen Lauf von %1 starten (Rechtsklick oder Umschalt+Eingabe: jeden Schritt erneut ausführen, auch die seit einem erfolgreichen Lauf unveränderten)</translation>
    </message>
    <message>
        <source>%1: %2; paused (%3): its runs wait until it is unpaused</source>
        <translation>%1: %2; pausiert (%3): seine Läufe warten, bis er fortgesetzt wird</translation>
    </message>
    <message>
        <source>Paused: its runs wait</source>
        <translation>Pausiert: seine Läufe warten</translation>
    </message>
    <message>
        <source>The job is paused; unpause it to start runs</source>
        <translation>Der Job ist pausiert; setzen Sie ihn fort, um Läufe zu starten</translation>
    </message>
    <message>
        <source>Unpause</source>
        <translation>Fortsetzen</translation>
    </message>
    <message>
        <source>Pause</source>
        <translation>Pausieren</translation>
    </message>
    <message>
        <source>Unpause %1</source>
        <translation>%1 fortsetzen</translation>
    </message>
    <message>
        <source>Pause %1</source>
        <translation>%1 pausieren</translation>
    </message>
    <message>
        <source>Start %1&apos;s runs again, with the versions found while it was paused</source>
        <translation>Läufe von %1 wieder starten, mit den Versionen, die während der Pause gefunden wurden</translation>
    </message>
    <message>
        <source>Hold back %1&apos;s runs: queued ones wait, new versions queue none (running ones go on)</source>
        <translation>Läufe von %1 zurückhalten: eingereihte warten, neue Versionen reihen keine ein (laufende gehen weiter)</translation>
    </message>
</context>
<context>
    <name>LogLines</name>
    <message>
        <source>No log lines yet</source>
        <translation>Noch keine Protokollzeilen</translation>
    </message>
    <message>
        <source>Log lines</source>
        <translation>Protokollzeilen</translation>
    </message>
    <message>
        <source>Search the log</source>
        <translation>Im Protokoll suchen</translation>
    </message>
    <message>
        <source>Previous</source>
        <translation>Vorheriger</translation>
    </message>
    <message>
        <source>Next</source>
        <translation>Nächster</translation>
    </message>
    <message>
        <source>no matches</source>
        <translation>keine Treffer</translation>
    </message>
    <message>
        <source>%1 of %2</source>
        <translation>%1 von %2</translation>
    </message>
    <message numerus="yes">
        <source>%n match(es)</source>
        <translation>
            <numerusform>%n Treffer</numerusform>
            <numerusform>%n Treffer</numerusform>
        </translation>
    </message>
    <message>
        <source>Copy</source>
        <translation>Kopieren</translation>
    </message>
    <message>
        <source>Copy the selected lines, or the whole log (Ctrl+C)</source>
        <translation>Die ausgewählten Zeilen oder das ganze Protokoll kopieren (Strg+C)</translation>
    </message>
    <message numerus="yes">
        <source>Resume (%n new)</source>
        <translation>
            <numerusform>Fortsetzen (%n neue)</numerusform>
            <numerusform>Fortsetzen (%n neue)</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>Main</name>
    <message>
        <source>Pando — %1</source>
        <translation>Pando — %1</translation>
    </message>
</context>
<context>
    <name>PairingLink</name>
    <message>
        <source>a pairing link looks like pando://host:port/pair?fp=…&amp;token=…; ask the install&apos;s administrator for a new one</source>
        <translation>ein Kopplungslink sieht so aus: pando://host:port/pair?fp=…&amp;token=…; bitten Sie den Administrator der Installation um einen neuen</translation>
    </message>
    <message>
        <source>the pairing link is empty</source>
        <translation>der Kopplungslink ist leer</translation>
    </message>
    <message>
        <source>this is not a link: %1</source>
        <translation>das ist kein Link: %1</translation>
    </message>
    <message>
        <source>the link must start with pando://</source>
        <translation>der Link muss mit pando:// beginnen</translation>
    </message>
    <message>
        <source>the link must start with pando://, not %1://</source>
        <translation>der Link muss mit pando:// beginnen, nicht mit %1://</translation>
    </message>
    <message>
        <source>the link names no host after pando://</source>
        <translation>der Link nennt nach pando:// keinen Host</translation>
    </message>
    <message>
        <source>the link names no port after the host (pando://%1:PORT/…)</source>
        <translation>der Link nennt nach dem Host keinen Port (pando://%1:PORT/…)</translation>
    </message>
    <message>
        <source>the link&apos;s path must be /pair, not &quot;%1&quot;</source>
        <translation>der Pfad des Links muss /pair sein, nicht „%1“</translation>
    </message>
    <message>
        <source>the link has no certificate fingerprint (fp=)</source>
        <translation>der Link enthält keinen Zertifikat-Fingerabdruck (fp=)</translation>
    </message>
    <message numerus="yes">
        <source>the fingerprint (fp=) must be 64 hex digits, got %n character(s)</source>
        <translation>
            <numerusform>der Fingerabdruck (fp=) muss aus 64 Hexziffern bestehen, er hat %n Zeichen</numerusform>
            <numerusform>der Fingerabdruck (fp=) muss aus 64 Hexziffern bestehen, er hat %n Zeichen</numerusform>
        </translation>
    </message>
    <message>
        <source>the link has no pairing code (token=)</source>
        <translation>der Link enthält keinen Kopplungscode (token=)</translation>
    </message>
    <message>
        <source>the pairing code (token=) must start with pandopair_</source>
        <translation>der Kopplungscode (token=) muss mit pandopair_ beginnen</translation>
    </message>
</context>
<context>
    <name>PipelinesList</name>
    <message>
        <source>Pipelines</source>
        <translation>Pipelines</translation>
    </message>
    <message>
        <source>Refresh</source>
        <translation>Aktualisieren</translation>
    </message>
    <message>
        <source>paused</source>
        <translation>pausiert</translation>
    </message>
    <message>
        <source>Rename…</source>
        <translation>Umbenennen…</translation>
    </message>
    <message>
        <source>Instances of %1</source>
        <translation>Instanzen von %1</translation>
    </message>
    <message>
        <source>Archive…</source>
        <translation>Archivieren…</translation>
    </message>
    <message>
        <source>List archived pipelines too</source>
        <translation>Archivierte Pipelines ebenfalls anzeigen</translation>
    </message>
    <message>
        <source>archived</source>
        <translation>archiviert</translation>
    </message>
    <message>
        <source>Show archived</source>
        <translation>Archivierte zeigen</translation>
    </message>
    <message>
        <source>Pause every instance of %1</source>
        <translation>Jede Instanz von %1 pausieren</translation>
    </message>
    <message>
        <source>Unpause every instance of %1</source>
        <translation>Jede Instanz von %1 fortsetzen</translation>
    </message>
    <message>
        <source>Archive every instance of %1…</source>
        <translation>Jede Instanz von %1 archivieren…</translation>
    </message>
</context>
<context>
    <name>ResourcesTab</name>
    <message>
        <source>This pipeline has no resources</source>
        <translation>Diese Pipeline hat keine Ressourcen</translation>
    </message>
    <message>
        <source>Resources of the pipeline</source>
        <translation>Ressourcen der Pipeline</translation>
    </message>
    <message>
        <source>%1, %2</source>
        <translation>%1, %2</translation>
    </message>
    <message>
        <source>%1 (%2)</source>
        <translation>%1 (%2)</translation>
    </message>
    <message>
        <source>check failed: %1</source>
        <translation>Prüfung fehlgeschlagen: %1</translation>
    </message>
    <message>
        <source>Versions of %1</source>
        <translation>Versionen von %1</translation>
    </message>
    <message>
        <source>Check now</source>
        <translation>Jetzt prüfen</translation>
    </message>
    <message>
        <source>Look for new versions of %1 now</source>
        <translation>Jetzt nach neuen Versionen von %1 suchen</translation>
    </message>
    <message>
        <source>Unpin</source>
        <translation>Lösen</translation>
    </message>
    <message>
        <source>The config pins this version (version:); change it there</source>
        <translation>Die Konfiguration legt diese Version fest (version:); dort ändern</translation>
    </message>
    <message>
        <source>Let gets use the newest version again</source>
        <translation>Gets wieder die neueste Version nehmen lassen</translation>
    </message>
    <message>
        <source>No versions found yet: Check now looks for them</source>
        <translation>Noch keine Versionen gefunden: Jetzt prüfen sucht sie</translation>
    </message>
    <message>
        <source>Versions, newest first</source>
        <translation>Versionen, neueste zuerst</translation>
    </message>
    <message>
        <source>%1, pinned</source>
        <translation>%1, festgelegt</translation>
    </message>
    <message>
        <source>pinned</source>
        <translation>festgelegt</translation>
    </message>
    <message>
        <source>Pin</source>
        <translation>Festlegen</translation>
    </message>
    <message>
        <source>Pin %1</source>
        <translation>%1 festlegen</translation>
    </message>
    <message>
        <source>Every get of %1 uses this version until it is unpinned</source>
        <translation>Jedes Get von %1 nimmt diese Version, bis sie gelöst wird</translation>
    </message>
    <message>
        <source>Check from here</source>
        <translation>Ab hier prüfen</translation>
    </message>
    <message>
        <source>Check from %1</source>
        <translation>Ab %1 prüfen</translation>
    </message>
    <message>
        <source>Check %1 starting at this version, to find what came after it again</source>
        <translation>%1 ab dieser Version prüfen, um wiederzufinden, was danach kam</translation>
    </message>
</context>
<context>
    <name>RunDetail</name>
    <message>
        <source>Select a run to see its steps</source>
        <translation>Einen Lauf auswählen, um seine Schritte zu sehen</translation>
    </message>
    <message>
        <source>%1 · %2</source>
        <translation>%1 · %2</translation>
    </message>
    <message>
        <source>Abort</source>
        <translation>Abbrechen</translation>
    </message>
    <message>
        <source>Stop the run; steps that run are cancelled (Ctrl+Shift+A)</source>
        <translation>Den Lauf beenden; laufende Schritte werden abgebrochen (Strg+Umschalt+A)</translation>
    </message>
    <message>
        <source>cached</source>
        <translation>zwischengespeichert</translation>
    </message>
    <message>
        <source>attempt %1</source>
        <translation>Versuch %1</translation>
    </message>
    <message>
        <source>Output of %1</source>
        <translation>Ausgabe von %1</translation>
    </message>
    <message>
        <source>Output of the whole run</source>
        <translation>Ausgabe des ganzen Laufs</translation>
    </message>
    <message>
        <source>exit code %1</source>
        <translation>Exit-Code %1</translation>
    </message>
    <message>
        <source>Whole run</source>
        <translation>Ganzer Lauf</translation>
    </message>
    <message>
        <source>No output yet</source>
        <translation>Noch keine Ausgabe</translation>
    </message>
    <message>
        <source>No output</source>
        <translation>Keine Ausgabe</translation>
    </message>
    <message>
        <source>Comment (optional)</source>
        <translation>Kommentar (optional)</translation>
    </message>
    <message>
        <source>Approve</source>
        <translation>Freigeben</translation>
    </message>
    <message>
        <source>Reject</source>
        <translation>Ablehnen</translation>
    </message>
</context>
<context>
    <name>RunState</name>
    <message>
        <source>succeeded</source>
        <translation>erfolgreich</translation>
    </message>
    <message>
        <source>running</source>
        <translation>läuft</translation>
    </message>
    <message>
        <source>waiting for approval</source>
        <translation>wartet auf Freigabe</translation>
    </message>
    <message>
        <source>failed</source>
        <translation>fehlgeschlagen</translation>
    </message>
    <message>
        <source>errored</source>
        <translation>mit Fehler abgebrochen</translation>
    </message>
    <message>
        <source>unchanged</source>
        <translation>unverändert</translation>
    </message>
    <message>
        <source>aborted</source>
        <translation>abgebrochen</translation>
    </message>
    <message>
        <source>queued</source>
        <translation>eingereiht</translation>
    </message>
    <message>
        <source>pending</source>
        <translation>ausstehend</translation>
    </message>
    <message>
        <source>skipped</source>
        <translation>übersprungen</translation>
    </message>
    <message>
        <source>%1 s</source>
        <translation>%1 s</translation>
    </message>
    <message>
        <source>%1 min %2 s</source>
        <translation>%1 min %2 s</translation>
    </message>
    <message>
        <source>%1 h %2 min</source>
        <translation>%1 h %2 min</translation>
    </message>
</context>
<context>
    <name>RunsList</name>
    <message>
        <source>Trigger…</source>
        <translation>Starten…</translation>
    </message>
    <message>
        <source>Start a run of one of the pipeline&apos;s jobs (Ctrl+T)</source>
        <translation>Einen Lauf eines Jobs der Pipeline starten (Strg+T)</translation>
    </message>
    <message>
        <source>Unpause</source>
        <translation>Fortsetzen</translation>
    </message>
    <message>
        <source>Pause</source>
        <translation>Pausieren</translation>
    </message>
    <message>
        <source>Let the pipeline start runs again (Ctrl+Shift+P)</source>
        <translation>Die Pipeline wieder Läufe starten lassen (Strg+Umschalt+P)</translation>
    </message>
    <message>
        <source>Start no new runs until unpaused; running ones go on (Ctrl+Shift+P)</source>
        <translation>Bis zum Fortsetzen keine neuen Läufe starten; laufende gehen weiter (Strg+Umschalt+P)</translation>
    </message>
    <message>
        <source>Paused: %1</source>
        <translation>Pausiert: %1</translation>
    </message>
    <message>
        <source>Paused</source>
        <translation>Pausiert</translation>
    </message>
    <message>
        <source>No runs yet. Trigger a job, or wait for a resource to change.</source>
        <translation>Noch keine Läufe. Einen Job starten oder warten, bis sich eine Ressource ändert.</translation>
    </message>
    <message>
        <source>%1 · %2</source>
        <translation>%1 · %2</translation>
    </message>
    <message>
        <source>Set by pipeline %1&apos;s set_pipeline step</source>
        <translation>Gesetzt vom set_pipeline-Schritt der Pipeline %1</translation>
    </message>
    <message>
        <source>Archived: %1. Set it again to bring it back: pando pipelines set %2 -c FILE</source>
        <translation>Archiviert: %1. Erneut setzen holt sie zurück: pando pipelines set %2 -c FILE</translation>
    </message>
</context>
<context>
    <name>RunsView</name>
    <message>
        <source>This install has no pipeline runner</source>
        <translation>Diese Installation hat keinen Pipeline-Runner</translation>
    </message>
    <message>
        <source>No pipelines yet</source>
        <translation>Noch keine Pipelines</translation>
    </message>
    <message>
        <source>A pipeline is a YAML file of resources and jobs; each job&apos;s plan fetches, runs tasks and puts results, and steps whose inputs did not change are skipped. Set one with &lt;tt&gt;pando pipelines set NAME -c pipeline.yml&lt;/tt&gt;; it appears here with its jobs and runs.</source>
        <translation>Eine Pipeline ist eine YAML-Datei mit Ressourcen und Jobs; der Plan eines Jobs holt Eingaben, führt Tasks aus und legt Ergebnisse ab, und Schritte, deren Eingaben sich nicht geändert haben, werden übersprungen. Mit &lt;tt&gt;pando pipelines set NAME -c pipeline.yml&lt;/tt&gt; eine anlegen; sie erscheint hier mit ihren Jobs und Läufen.</translation>
    </message>
    <message>
        <source>Runs</source>
        <translation>Läufe</translation>
    </message>
    <message>
        <source>Runs (Ctrl+1)</source>
        <translation>Läufe (Strg+1)</translation>
    </message>
    <message>
        <source>Jobs</source>
        <translation>Jobs</translation>
    </message>
    <message>
        <source>Jobs (Ctrl+2)</source>
        <translation>Jobs (Strg+2)</translation>
    </message>
    <message>
        <source>Config</source>
        <translation>Konfiguration</translation>
    </message>
    <message>
        <source>Config (Ctrl+3)</source>
        <translation>Konfiguration (Strg+3)</translation>
    </message>
    <message>
        <source>Resources</source>
        <translation>Ressourcen</translation>
    </message>
    <message>
        <source>Resources (Ctrl+4)</source>
        <translation>Ressourcen (Strg+4)</translation>
    </message>
    <message>
        <source>Rename %1</source>
        <translation>%1 umbenennen</translation>
    </message>
    <message>
        <source>Rename</source>
        <translation>Umbenennen</translation>
    </message>
    <message>
        <source>New name</source>
        <translation>Neuer Name</translation>
    </message>
    <message>
        <source>Its runs, versions, secrets and who may use it go with it. Forges that call its webhooks need the new address.</source>
        <translation>Seine Läufe, Versionen, Geheimnisse und wer sie nutzen darf, gehen mit. Forges, die seine Webhooks aufrufen, brauchen die neue Adresse.</translation>
    </message>
    <message>
        <source>Archive %1?</source>
        <translation>%1 archivieren?</translation>
    </message>
    <message>
        <source>Archive</source>
        <translation>Archivieren</translation>
    </message>
    <message>
        <source>It stops for good: its queued and running runs are aborted, its config is dropped and the pipelines it set are archived too. Its runs, versions and secrets stay. Setting it again brings it back, paused.</source>
        <translation>Sie hält dauerhaft an: wartende und laufende Läufe werden abgebrochen, ihre Konfiguration wird verworfen und die von ihr gesetzten Pipelines werden ebenfalls archiviert. Ihre Läufe, Versionen und Geheimnisse bleiben. Erneutes Setzen holt sie pausiert zurück.</translation>
    </message>
    <message>
        <source>Archive every instance of %1?</source>
        <translation>Jede Instanz von %1 archivieren?</translation>
    </message>
    <message>
        <source>Archive all</source>
        <translation>Alle archivieren</translation>
    </message>
    <message numerus="yes">
        <source>%n instance(s) stop for good: their queued and running runs are aborted and their configs dropped. Their runs, versions and secrets stay; setting an instance again brings it back, paused.</source>
        <translation>
            <numerusform>%n Instanz endet für immer: ihre wartenden und laufenden Läufe werden abgebrochen und ihre Konfiguration verworfen. Ihre Läufe, Versionen und Geheimnisse bleiben; setzt man die Instanz erneut, kommt sie zurück, pausiert.</numerusform>
            <numerusform>%n Instanzen enden für immer: ihre wartenden und laufenden Läufe werden abgebrochen und ihre Konfigurationen verworfen. Ihre Läufe, Versionen und Geheimnisse bleiben; setzt man eine Instanz erneut, kommt sie zurück, pausiert.</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>SettingsView</name>
    <message>
        <source>Settings</source>
        <translation>Einstellungen</translation>
    </message>
    <message>
        <source>Serve teammates</source>
        <translation>Für das Team bereitstellen</translation>
    </message>
    <message>
        <source>Let teammates use this computer&apos;s engine</source>
        <translation>Teammitglieder die Engine dieses Computers nutzen lassen</translation>
    </message>
    <message>
        <source>Address</source>
        <translation>Adresse</translation>
    </message>
    <message>
        <source>0.0.0.0 for every network</source>
        <translation>0.0.0.0 für alle Netzwerke</translation>
    </message>
    <message>
        <source>Port</source>
        <translation>Port</translation>
    </message>
    <message>
        <source>Apply</source>
        <translation>Übernehmen</translation>
    </message>
    <message>
        <source>Teammates get their own accounts and roles; each pairs once with a link made for their account. Nothing changes for you while this is off.</source>
        <translation>Teammitglieder erhalten eigene Konten und Rollen; jedes koppelt sich einmal mit einem Link, der für sein Konto erstellt wurde. Solange dies aus ist, ändert sich für Sie nichts.</translation>
    </message>
    <message>
        <source>Pair a teammate</source>
        <translation>Teammitglied koppeln</translation>
    </message>
    <message>
        <source>Account</source>
        <translation>Konto</translation>
    </message>
    <message>
        <source>Make pairing link</source>
        <translation>Kopplungslink erstellen</translation>
    </message>
    <message>
        <source>Link</source>
        <translation>Link</translation>
    </message>
    <message>
        <source>choose an account and make a link</source>
        <translation>Konto wählen und Link erstellen</translation>
    </message>
    <message>
        <source>Copy</source>
        <translation>Kopieren</translation>
    </message>
    <message>
        <source>Fingerprint</source>
        <translation>Fingerabdruck</translation>
    </message>
    <message>
        <source>Your teammate&apos;s Connections view shows the same picture for this install.</source>
        <translation>Die Verbindungsansicht Ihres Teammitglieds zeigt für diese Installation dasselbe Bild.</translation>
    </message>
    <message>
        <source>Connected now</source>
        <translation>Jetzt verbunden</translation>
    </message>
    <message>
        <source>Nobody is connected.</source>
        <translation>Niemand ist verbunden.</translation>
    </message>
    <message>
        <source>Pipelines</source>
        <translation>Pipelines</translation>
    </message>
    <message>
        <source>Tasks on this computer (outside containers): %1</source>
        <translation>Aufgaben auf diesem Computer (außerhalb von Containern): %1</translation>
    </message>
    <message>
        <source>unknown</source>
        <translation>unbekannt</translation>
    </message>
    <message>
        <source>Administrators change it with: pando settings set host-execution on|off, and allow a pipeline with: pando pipelines host-execution NAME allow</source>
        <translation>Administratoren ändern das mit: pando settings set host-execution on|off, und erlauben es einer Pipeline mit: pando pipelines host-execution NAME allow</translation>
    </message>
    <message>
        <source>Apps</source>
        <translation>Apps</translation>
    </message>
    <message>
        <source>Apps whose spec a member writes may use: %1</source>
        <translation>Apps, deren Spezifikation ein Mitglied schreibt, dürfen nutzen: %1</translation>
    </message>
    <message>
        <source>Administrators&apos; apps may use all of it. Administrators change it with: pando settings set local-repositories|ssh-agent|internal-hosts on|off, or member-ports FIRST-LAST|none</source>
        <translation>Apps von Administratoren dürfen alles davon nutzen. Administratoren ändern das mit: pando settings set local-repositories|ssh-agent|internal-hosts on|off, oder member-ports ERSTER-LETZTER|none</translation>
    </message>
    <message>
        <source>Pairing link</source>
        <translation>Kopplungslink</translation>
    </message>
    <message>
        <source>Copy the pairing link</source>
        <translation>Kopplungslink kopieren</translation>
    </message>
    <message>
        <source>QR code of the pairing link</source>
        <translation>QR-Code des Kopplungslinks</translation>
    </message>
    <message>
        <source>This computer&apos;s engine</source>
        <translation>Die Engine dieses Computers</translation>
    </message>
    <message>
        <source>Apps a member may own</source>
        <translation>Apps, die ein Mitglied besitzen darf</translation>
    </message>
    <message>
        <source>10 (the default)</source>
        <translation>10 (Standard)</translation>
    </message>
    <message>
        <source>Pipeline runs at once</source>
        <translation>Pipeline-Läufe gleichzeitig</translation>
    </message>
    <message>
        <source>4 (the default)</source>
        <translation>4 (Standard)</translation>
    </message>
    <message>
        <source>Approval policy file</source>
        <translation>Freigaberichtlinie (Datei)</translation>
    </message>
    <message>
        <source>none: no deploy waits for sign-off</source>
        <translation>keine: kein Deploy wartet auf Freigabe</translation>
    </message>
    <message>
        <source>An approval waits</source>
        <translation>Eine Freigabe wartet</translation>
    </message>
    <message>
        <source>24h (the default; 30m, 7d, …)</source>
        <translation>24h (Standard; 30m, 7d, …)</translation>
    </message>
    <message>
        <source>How long an approval waits</source>
        <translation>Wie lange eine Freigabe wartet</translation>
    </message>
    <message>
        <source>Audit sinks file</source>
        <translation>Audit-Ziele (Datei)</translation>
    </message>
    <message>
        <source>none: the audit log stays here</source>
        <translation>keine: das Audit-Log bleibt hier</translation>
    </message>
    <message>
        <source>Saved. The engine reads these when it starts: quit Pando from the tray and start it again to apply them.</source>
        <translation>Gespeichert. Die Engine liest diese Werte beim Start: Beende Pando über das Tray-Symbol und starte es neu, um sie anzuwenden.</translation>
    </message>
    <message>
        <source>Save</source>
        <translation>Speichern</translation>
    </message>
    <message>
        <source>Apps are served by</source>
        <translation>Apps werden ausgeliefert von</translation>
    </message>
    <message>
        <source>Caddy when it is installed (the default)</source>
        <translation>Caddy, wenn installiert (Standard)</translation>
    </message>
    <message>
        <source>Caddy: apps keep answering while Pando is closed</source>
        <translation>Caddy: Apps antworten auch, wenn Pando geschlossen ist</translation>
    </message>
    <message>
        <source>Pando itself: apps stop when Pando quits</source>
        <translation>Pando selbst: Apps stoppen, wenn Pando beendet wird</translation>
    </message>
    <message>
        <source>Save the install CA&apos;s root certificate</source>
        <translation>Das Stammzertifikat der Installations-CA speichern</translation>
    </message>
    <message>
        <source>Certificates (*.crt *.pem)</source>
        <translation>Zertifikate (*.crt *.pem)</translation>
    </message>
    <message>
        <source>All files (*)</source>
        <translation>Alle Dateien (*)</translation>
    </message>
    <message>
        <source>Domains</source>
        <translation>Domains</translation>
    </message>
    <message>
        <source>Which names apps may be served at. An app names its own in route.domains of its spec; with a base domain, an app without names is served at APP.BASE-DOMAIN.</source>
        <translation>Unter welchen Namen Apps erreichbar sein dürfen. Eine App nennt ihre eigenen unter route.domains in ihrer Spezifikation; mit einer Basis-Domain ist eine App ohne Namen unter APP.BASIS-DOMAIN erreichbar.</translation>
    </message>
    <message>
        <source>Base domain</source>
        <translation>Basis-Domain</translation>
    </message>
    <message>
        <source>none (apps.example.com, …)</source>
        <translation>keine (apps.example.com, …)</translation>
    </message>
    <message>
        <source>none</source>
        <translation>keine</translation>
    </message>
    <message>
        <source>Allowed domains</source>
        <translation>Erlaubte Domains</translation>
    </message>
    <message>
        <source>any name (or: example.com, example.org)</source>
        <translation>jeder Name (oder: example.com, example.org)</translation>
    </message>
    <message>
        <source>Allowed domains, separated by commas</source>
        <translation>Erlaubte Domains, durch Kommas getrennt</translation>
    </message>
    <message>
        <source>any name</source>
        <translation>jeder Name</translation>
    </message>
    <message>
        <source>Wildcard names</source>
        <translation>Platzhalter-Namen</translation>
    </message>
    <message>
        <source>allowed (*.name in route.domains)</source>
        <translation>erlaubt (*.name in route.domains)</translation>
    </message>
    <message>
        <source>not allowed</source>
        <translation>nicht erlaubt</translation>
    </message>
    <message>
        <source>Allow wildcard names</source>
        <translation>Platzhalter-Namen erlauben</translation>
    </message>
    <message>
        <source>Only administrators change these (in the desktop, or with: pando settings set base-domain|allowed-domains|wildcard-domains).</source>
        <translation>Nur Administratoren ändern diese (in der Desktop-App oder mit: pando settings set base-domain|allowed-domains|wildcard-domains).</translation>
    </message>
    <message>
        <source>Save the domain settings</source>
        <translation>Die Domain-Einstellungen speichern</translation>
    </message>
    <message>
        <source>Install CA</source>
        <translation>Installations-CA</translation>
    </message>
    <message>
        <source>Save root certificate…</source>
        <translation>Stammzertifikat speichern…</translation>
    </message>
    <message>
        <source>Save the install CA&apos;s root certificate to a file</source>
        <translation>Das Stammzertifikat der Installations-CA in eine Datei speichern</translation>
    </message>
    <message>
        <source>Names served with tls: internal have certificates from the install CA: add its root where you trust certificates (a browser, the system&apos;s store).</source>
        <translation>Namen mit tls: internal haben Zertifikate der Installations-CA: fügen Sie ihr Stammzertifikat dort hinzu, wo Sie Zertifikaten vertrauen (Browser, Zertifikatsspeicher des Systems).</translation>
    </message>
    <message>
        <source>Identity assertions</source>
        <translation>Identitätsnachweise</translation>
    </message>
    <message>
        <source>Apps that ask for it get only signed-in people&apos;s requests, each with an X-Pando-Assertion header naming the person; they verify it with the keys at /.well-known/jwks.json on this install (see the user guide, The edge).</source>
        <translation>Apps, die es verlangen, erhalten nur Anfragen angemeldeter Personen, jede mit einem X-Pando-Assertion-Header, der die Person nennt; sie prüfen ihn mit den Schlüsseln unter /.well-known/jwks.json dieser Installation (siehe Benutzerhandbuch, Die Edge).</translation>
    </message>
    <message>
        <source>Keys: %1</source>
        <translation>Schlüssel: %1</translation>
    </message>
    <message>
        <source>The signing key is replaced every 7 days unless pandod was started with another --assertion-key-days. Administrators replace it at once with: pando edge rotate-key</source>
        <translation>Der Signaturschlüssel wird alle 7 Tage ersetzt, sofern pandod nicht mit einem anderen --assertion-key-days gestartet wurde. Administratoren ersetzen ihn sofort mit: pando edge rotate-key</translation>
    </message>
    <message>
        <source>A Traefik you run: Pando writes its configuration</source>
        <translation>Ein Traefik, den Sie betreiben: Pando schreibt seine Konfiguration</translation>
    </message>
    <message>
        <source>Cloudflare Tunnel: apps on your domain, no open port</source>
        <translation>Cloudflare Tunnel: Apps unter Ihrer Domain, ohne offenen Port</translation>
    </message>
    <message>
        <source>Traefik&apos;s configuration folder</source>
        <translation>Konfigurationsordner von Traefik</translation>
    </message>
    <message>
        <source>the folder its file provider watches (required)</source>
        <translation>der Ordner, den sein File-Provider beobachtet (erforderlich)</translation>
    </message>
    <message>
        <source>Certificate resolver</source>
        <translation>Zertifikats-Resolver</translation>
    </message>
    <message>
        <source>pando (the default)</source>
        <translation>pando (Standard)</translation>
    </message>
    <message>
        <source>Certificates for internal names</source>
        <translation>Zertifikate für interne Namen</translation>
    </message>
    <message>
        <source>a folder of HOST.crt and HOST.key (optional)</source>
        <translation>ein Ordner mit HOST.crt und HOST.key (optional)</translation>
    </message>
    <message>
        <source>Account id</source>
        <translation>Konto-ID</translation>
    </message>
    <message>
        <source>32 hex digits, from the dashboard</source>
        <translation>32 Hex-Ziffern, aus dem Dashboard</translation>
    </message>
    <message>
        <source>Tunnel id</source>
        <translation>Tunnel-ID</translation>
    </message>
    <message>
        <source>a remotely-managed tunnel&apos;s UUID</source>
        <translation>die UUID eines ferngesteuerten Tunnels</translation>
    </message>
    <message>
        <source>Zone id</source>
        <translation>Zonen-ID</translation>
    </message>
    <message>
        <source>the zone apps&apos; names are in</source>
        <translation>die Zone, in der die Namen der Apps liegen</translation>
    </message>
    <message>
        <source>API token file</source>
        <translation>Datei mit dem API-Token</translation>
    </message>
    <message>
        <source>a file only you may read that holds the token</source>
        <translation>eine Datei, die nur Sie lesen dürfen und die das Token enthält</translation>
    </message>
    <message>
        <source>cloudflared program</source>
        <translation>cloudflared-Programm</translation>
    </message>
    <message>
        <source>optional: Pando runs the tunnel with it</source>
        <translation>optional: Pando betreibt den Tunnel damit</translation>
    </message>
    <message>
        <source>API address</source>
        <translation>API-Adresse</translation>
    </message>
    <message>
        <source>Cloudflare&apos;s (the default)</source>
        <translation>die von Cloudflare (Standard)</translation>
    </message>
</context>
<context>
    <name>Sidebar</name>
    <message>
        <source>Switch connection</source>
        <translation>Verbindung wechseln</translation>
    </message>
    <message>
        <source>Connected to</source>
        <translation>Verbunden mit</translation>
    </message>
    <message>
        <source>Apps</source>
        <translation>Apps</translation>
    </message>
    <message>
        <source>Pipelines</source>
        <translation>Pipelines</translation>
    </message>
    <message>
        <source>Approvals</source>
        <translation>Freigaben</translation>
    </message>
    <message>
        <source>Activity</source>
        <translation>Aktivität</translation>
    </message>
    <message>
        <source>Connections</source>
        <translation>Verbindungen</translation>
    </message>
    <message>
        <source>Settings</source>
        <translation>Einstellungen</translation>
    </message>
    <message numerus="yes">
        <source>%1, %n waiting</source>
        <translation>
            <numerusform>%1, %n wartet</numerusform>
            <numerusform>%1, %n warten</numerusform>
        </translation>
    </message>
    <message>
        <source>Connected to %1. Switch connection</source>
        <translation>Verbunden mit %1. Verbindung wechseln</translation>
    </message>
    <message>
        <source>Sources</source>
        <translation>Quellen</translation>
    </message>
</context>
<context>
    <name>SourcesView</name>
    <message>
        <source>Sources</source>
        <translation>Quellen</translation>
    </message>
    <message>
        <source>No source connections you may use yet. Public repositories need none.</source>
        <translation>Noch keine Quellverbindungen, die Sie nutzen dürfen. Öffentliche Repositorys brauchen keine.</translation>
    </message>
    <message>
        <source>Source connections</source>
        <translation>Quellverbindungen</translation>
    </message>
    <message>
        <source>%1, %2 at %3, %4</source>
        <translation>%1, %2 unter %3, %4</translation>
    </message>
    <message>
        <source>%1 · %2 · owner %3</source>
        <translation>%1 · %2 · Besitzer %3</translation>
    </message>
    <message>
        <source>%1 · %2</source>
        <translation>%1 · %2</translation>
    </message>
    <message>
        <source>Connection %1</source>
        <translation>Verbindung %1</translation>
    </message>
    <message>
        <source>Repository to read, e.g. https://github.com/acme/api.git</source>
        <translation>Zu lesendes Repository, z. B. https://github.com/acme/api.git</translation>
    </message>
    <message>
        <source>Repository to test the connection on</source>
        <translation>Repository, an dem die Verbindung geprüft wird</translation>
    </message>
    <message>
        <source>Test</source>
        <translation>Prüfen</translation>
    </message>
    <message>
        <source>Remove</source>
        <translation>Entfernen</translation>
    </message>
    <message>
        <source>Add a connection</source>
        <translation>Verbindung hinzufügen</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>Name</translation>
    </message>
    <message>
        <source>github</source>
        <translation>github</translation>
    </message>
    <message>
        <source>Connection name</source>
        <translation>Name der Verbindung</translation>
    </message>
    <message>
        <source>Forge</source>
        <translation>Forge</translation>
    </message>
    <message>
        <source>Kind of forge</source>
        <translation>Art der Forge</translation>
    </message>
    <message>
        <source>Address</source>
        <translation>Adresse</translation>
    </message>
    <message>
        <source>https://github.com</source>
        <translation>https://github.com</translation>
    </message>
    <message>
        <source>The forge&apos;s address</source>
        <translation>Die Adresse der Forge</translation>
    </message>
    <message>
        <source>Owner</source>
        <translation>Besitzer</translation>
    </message>
    <message>
        <source>optional: only this user, organisation or group</source>
        <translation>optional: nur dieser Benutzer, diese Organisation oder Gruppe</translation>
    </message>
    <message>
        <source>Credential</source>
        <translation>Zugangsdaten</translation>
    </message>
    <message>
        <source>Token (https)</source>
        <translation>Token (https)</translation>
    </message>
    <message>
        <source>Deploy key (ssh)</source>
        <translation>Deploy-Schlüssel (ssh)</translation>
    </message>
    <message>
        <source>User</source>
        <translation>Benutzer</translation>
    </message>
    <message>
        <source>optional for GitHub, GitLab, Bitbucket and Azure DevOps</source>
        <translation>optional für GitHub, GitLab, Bitbucket und Azure DevOps</translation>
    </message>
    <message>
        <source>The account the token is sent with</source>
        <translation>Das Konto, mit dem das Token gesendet wird</translation>
    </message>
    <message>
        <source>Token</source>
        <translation>Token</translation>
    </message>
    <message>
        <source>Private key</source>
        <translation>Privater Schlüssel</translation>
    </message>
    <message>
        <source>-----BEGIN OPENSSH PRIVATE KEY----- … (no passphrase)</source>
        <translation>-----BEGIN OPENSSH PRIVATE KEY----- … (ohne Passphrase)</translation>
    </message>
    <message>
        <source>Deploy key</source>
        <translation>Deploy-Schlüssel</translation>
    </message>
    <message>
        <source>Host keys</source>
        <translation>Host-Schlüssel</translation>
    </message>
    <message>
        <source>what ssh-keyscan prints for the server; check the fingerprints</source>
        <translation>was ssh-keyscan für den Server ausgibt; prüfen Sie die Fingerabdrücke</translation>
    </message>
    <message>
        <source>Working…</source>
        <translation>Wird ausgeführt…</translation>
    </message>
    <message>
        <source>Add connection</source>
        <translation>Verbindung hinzufügen</translation>
    </message>
    <message>
        <source>Repositories</source>
        <translation>Repositorys</translation>
    </message>
    <message numerus="yes">
        <source>%n repository(s) the token of %1 can see</source>
        <translation>
            <numerusform>%n Repository, das das Token von %1 sehen kann</numerusform>
            <numerusform>%n Repositorys, die das Token von %1 sehen kann</numerusform>
        </translation>
    </message>
    <message>
        <source>Reload</source>
        <translation>Neu laden</translation>
    </message>
    <message>
        <source>Show repositories</source>
        <translation>Repositorys anzeigen</translation>
    </message>
    <message>
        <source>Repositories of %1</source>
        <translation>Repositorys von %1</translation>
    </message>
    <message>
        <source>%1, %2, default branch %3</source>
        <translation>%1, %2, Standard-Branch %3</translation>
    </message>
    <message>
        <source>not known</source>
        <translation>unbekannt</translation>
    </message>
    <message>
        <source>%1 · default branch %2 · %3</source>
        <translation>%1 · Standard-Branch %2 · %3</translation>
    </message>
    <message>
        <source>Create app…</source>
        <translation>App erstellen …</translation>
    </message>
    <message>
        <source>Create an app from %1</source>
        <translation>Eine App aus %1 erstellen</translation>
    </message>
    <message>
        <source>The repositories the token of %1 can see, from its forge&apos;s API (token connections to GitHub, GitLab, Gitea, Bitbucket and Azure DevOps, and GitHub Apps).</source>
        <translation>Die Repositorys, die das Token von %1 sehen kann, aus der API seiner Forge (Token-Verbindungen zu GitHub, GitLab, Gitea, Bitbucket und Azure DevOps sowie GitHub Apps).</translation>
    </message>
    <message>
        <source>GitHub App</source>
        <translation>GitHub App</translation>
    </message>
    <message>
        <source>App ID</source>
        <translation>App-ID</translation>
    </message>
    <message>
        <source>the number on the app&apos;s settings page</source>
        <translation>die Nummer auf der Einstellungsseite der App</translation>
    </message>
    <message>
        <source>GitHub App ID</source>
        <translation>ID der GitHub App</translation>
    </message>
    <message>
        <source>Installation ID</source>
        <translation>Installations-ID</translation>
    </message>
    <message>
        <source>the number ending the installation&apos;s settings address</source>
        <translation>die Nummer am Ende der Einstellungsadresse der Installation</translation>
    </message>
    <message>
        <source>App private key</source>
        <translation>Privater Schlüssel der App</translation>
    </message>
    <message>
        <source>-----BEGIN RSA PRIVATE KEY----- … (the .pem GitHub generated)</source>
        <translation>-----BEGIN RSA PRIVATE KEY----- … (die .pem-Datei, die GitHub erzeugt hat)</translation>
    </message>
    <message>
        <source>GitHub App private key</source>
        <translation>Privater Schlüssel der GitHub App</translation>
    </message>
    <message>
        <source>A source connection reads private repositories: a forge&apos;s address with a token, a deploy key, a GitHub App installation, or an OAuth application you authorize in the browser. Apps whose repository it covers read through it from their next create or update. The token or key is never shown again.</source>
        <translation>Eine Quellverbindung liest private Repositorys: die Adresse einer Forge mit einem Token, einem Deploy-Schlüssel, einer GitHub-App-Installation oder einer OAuth-Anwendung, die Sie im Browser autorisieren. Apps, deren Repository sie abdeckt, lesen ab ihrem nächsten Erstellen oder Aktualisieren über sie. Token oder Schlüssel werden nie wieder angezeigt.</translation>
    </message>
    <message>
        <source>Authorize again…</source>
        <translation>Erneut autorisieren…</translation>
    </message>
    <message>
        <source>The forge&apos;s authorization page, to open in a browser</source>
        <translation>Die Autorisierungsseite der Forge, zum Öffnen im Browser</translation>
    </message>
    <message>
        <source>Stop waiting</source>
        <translation>Nicht mehr warten</translation>
    </message>
    <message>
        <source>OAuth app</source>
        <translation>OAuth-App</translation>
    </message>
    <message>
        <source>Client ID</source>
        <translation>Client-ID</translation>
    </message>
    <message>
        <source>from the application&apos;s settings on the forge</source>
        <translation>aus den Einstellungen der Anwendung auf der Forge</translation>
    </message>
    <message>
        <source>OAuth client ID</source>
        <translation>OAuth-Client-ID</translation>
    </message>
    <message>
        <source>Client secret</source>
        <translation>Client-Geheimnis</translation>
    </message>
    <message>
        <source>OAuth client secret</source>
        <translation>OAuth-Client-Geheimnis</translation>
    </message>
    <message>
        <source>Register http://127.0.0.1/callback as the application&apos;s callback URL. The forge&apos;s page opens in your browser.</source>
        <translation>Tragen Sie http://127.0.0.1/callback als Callback-URL der Anwendung ein. Die Seite der Forge öffnet sich in Ihrem Browser.</translation>
    </message>
    <message>
        <source>Authorize in browser…</source>
        <translation>Im Browser autorisieren…</translation>
    </message>
    <message>
        <source>Image to read, e.g. ghcr.io/acme/api:1.4 (empty: the login alone)</source>
        <translation>Zu lesendes Image, z. B. ghcr.io/acme/api:1.4 (leer: nur die Anmeldung)</translation>
    </message>
    <message>
        <source>Image to test the connection on</source>
        <translation>Image, an dem die Verbindung getestet wird</translation>
    </message>
    <message>
        <source>https://ghcr.io</source>
        <translation>https://ghcr.io</translation>
    </message>
    <message>
        <source>docker login&apos;s user name</source>
        <translation>Benutzername für docker login</translation>
    </message>
</context>
<context>
    <name>main</name>
    <message>
        <source>Pando Desktop: your apps, deploys, pipelines and approvals.</source>
        <translation>Pando Desktop: Ihre Apps, Bereitstellungen, Pipelines und Freigaben.</translation>
    </message>
    <message>
        <source>Attach to the Pando install at this URL instead of this computer&apos;s engine.</source>
        <translation>Mit der Pando-Installation unter dieser URL verbinden statt mit der Engine dieses Computers.</translation>
    </message>
    <message>
        <source>This computer&apos;s engine data directory (default: ~/.local/share/pando).</source>
        <translation>Das Datenverzeichnis der Engine dieses Computers (Vorgabe: ~/.local/share/pando).</translation>
    </message>
    <message>
        <source>Start even when another pando-desktop runs for this user.</source>
        <translation>Auch starten, wenn für diesen Benutzer schon ein anderes pando-desktop läuft.</translation>
    </message>
    <message>
        <source>pando-desktop takes no arguments, got: %1</source>
        <translation>pando-desktop erwartet keine Argumente, erhalten: %1</translation>
    </message>
    <message>
        <source>--server: %1 is not a URL</source>
        <translation>--server: %1 ist keine URL</translation>
    </message>
    <message>
        <source>Pando</source>
        <translation>Pando</translation>
    </message>
    <message>
        <source>Show the app in this language (default: the system&apos;s).</source>
        <translation>Die App in dieser Sprache zeigen (Vorgabe: die des Systems).</translation>
    </message>
    <message>
        <source>A JSON file of syslog/HTTPS sinks this computer&apos;s engine pushes its audit log to.</source>
        <translation>Eine JSON-Datei mit Syslog-/HTTPS-Zielen, an die die Engine dieses Computers ihr Audit-Protokoll sendet.</translation>
    </message>
    <message>
        <source>--token-file: cannot read %1: %2</source>
        <translation>--token-file: %1 ist nicht lesbar: %2</translation>
    </message>
    <message>
        <source>--token-file: %1 holds no token</source>
        <translation>--token-file: %1 enthält kein Token</translation>
    </message>
    <message>
        <source>A file holding the API token for --server (default: $PANDO_TOKEN).</source>
        <translation>Eine Datei mit dem API-Token für --server (Vorgabe: $PANDO_TOKEN).</translation>
    </message>
    <message>
        <source>--token is not taken: every user of this computer could read it (ps). Put the token in a file only you can read and pass --token-file FILE, or set PANDO_TOKEN</source>
        <translation>--token wird nicht angenommen: jeder Benutzer dieses Computers könnte es lesen (ps). Legen Sie das Token in eine Datei, die nur Sie lesen können, und geben Sie --token-file DATEI an, oder setzen Sie PANDO_TOKEN</translation>
    </message>
    <message>
        <source>--server needs --token-file FILE (or PANDO_TOKEN)</source>
        <translation>--server braucht --token-file DATEI (oder PANDO_TOKEN)</translation>
    </message>
    <message>
        <source>Open every dialog once, close it and exit: non-zero, saying what failed, when a part of Qt this app needs is missing.</source>
        <translation>Jeden Dialog einmal öffnen und schließen, dann beenden: mit einem Fehlercode und der Ursache, wenn ein Teil von Qt fehlt, den diese App braucht.</translation>
    </message>
</context>
<context>
    <name>pando::desktop::ActivityModel</name>
    <message>
        <source>%1: deploy queued</source>
        <translation>%1: Deploy eingereiht</translation>
    </message>
    <message>
        <source>approved (%1)</source>
        <translation>freigegeben (%1)</translation>
    </message>
    <message>
        <source>%1: deploy succeeded</source>
        <translation>%1: Deploy erfolgreich</translation>
    </message>
    <message>
        <source>%1: deploy failed</source>
        <translation>%1: Deploy fehlgeschlagen</translation>
    </message>
    <message>
        <source>%1 failed: %2</source>
        <translation>%1 fehlgeschlagen: %2</translation>
    </message>
    <message>
        <source>%1 was created</source>
        <translation>%1 wurde angelegt</translation>
    </message>
    <message>
        <source>%1: spec changed</source>
        <translation>%1: Spec geändert</translation>
    </message>
    <message>
        <source>%1 was removed</source>
        <translation>%1 wurde entfernt</translation>
    </message>
    <message>
        <source>Approval requested: %1</source>
        <translation>Freigabe angefordert: %1</translation>
    </message>
    <message>
        <source>Approved: %1</source>
        <translation>Freigegeben: %1</translation>
    </message>
    <message>
        <source>Rejected: %1</source>
        <translation>Abgelehnt: %1</translation>
    </message>
    <message>
        <source>Expired: %1</source>
        <translation>Abgelaufen: %1</translation>
    </message>
    <message>
        <source>%1 queued</source>
        <translation>%1 eingereiht</translation>
    </message>
    <message>
        <source>%1 started</source>
        <translation>%1 gestartet</translation>
    </message>
    <message>
        <source>Pipeline %1 paused</source>
        <translation>Pipeline %1 pausiert</translation>
    </message>
    <message>
        <source>%1 succeeded</source>
        <translation>%1 erfolgreich</translation>
    </message>
    <message>
        <source>%1 failed</source>
        <translation>%1 fehlgeschlagen</translation>
    </message>
    <message>
        <source>%1 errored</source>
        <translation>%1 mit Fehler abgebrochen</translation>
    </message>
    <message>
        <source>%1 aborted</source>
        <translation>%1 abgebrochen</translation>
    </message>
    <message>
        <source>%1 ended: %2</source>
        <translation>%1 beendet: %2</translation>
    </message>
</context>
<context>
    <name>pando::desktop::AppAddressesModel</name>
    <message>
        <source>HTTPS, certificate from a public CA (ACME)</source>
        <translation>HTTPS, Zertifikat einer öffentlichen CA (ACME)</translation>
    </message>
    <message>
        <source>HTTPS, certificate from the install CA</source>
        <translation>HTTPS, Zertifikat der Installations-CA</translation>
    </message>
    <message>
        <source>plain HTTP</source>
        <translation>unverschlüsseltes HTTP</translation>
    </message>
    <message>
        <source>no certificate needed</source>
        <translation>kein Zertifikat nötig</translation>
    </message>
    <message>
        <source>certificate failed: %1</source>
        <translation>Zertifikat fehlgeschlagen: %1</translation>
    </message>
    <message>
        <source>certificate from %1 until %2</source>
        <translation>Zertifikat von %1 bis %2</translation>
    </message>
    <message>
        <source>certificate not issued yet</source>
        <translation>Zertifikat noch nicht ausgestellt</translation>
    </message>
</context>
<context>
    <name>pando::desktop::AppCommand</name>
    <message>
        <source>A quote is not closed: close it, or put \ before it</source>
        <translation>Ein Anführungszeichen ist nicht geschlossen: schließen Sie es oder setzen Sie \ davor</translation>
    </message>
    <message>
        <source>Type a command to run, e.g. ls -la /</source>
        <translation>Geben Sie einen Befehl ein, z. B. ls -la /</translation>
    </message>
</context>
<context>
    <name>pando::desktop::AppCreator</name>
    <message>
        <source>Give the app a name</source>
        <translation>Gib der App einen Namen</translation>
    </message>
    <message>
        <source>Say which git repository to deploy from</source>
        <translation>Gib an, aus welchem Git-Repository deployt wird</translation>
    </message>
    <message>
        <source>The port the app listens on is a number from 1 to 65535</source>
        <translation>Der Port, auf dem die App lauscht, ist eine Zahl von 1 bis 65535</translation>
    </message>
    <message>
        <source>Choose a spec file</source>
        <translation>Wähle eine Spec-Datei</translation>
    </message>
    <message>
        <source>Cannot read %1: %2</source>
        <translation>%1 kann nicht gelesen werden: %2</translation>
    </message>
    <message>
        <source>%1 is larger than 1 MiB; a spec is a short YAML or JSON file</source>
        <translation>%1 ist größer als 1 MiB; eine Spec ist eine kurze YAML- oder JSON-Datei</translation>
    </message>
    <message>
        <source>Not connected: the app cannot be created now</source>
        <translation>Nicht verbunden: die App kann jetzt nicht angelegt werden</translation>
    </message>
    <message>
        <source>%1 — %2</source>
        <translation>%1 — %2</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1: %2</translation>
    </message>
    <message>
        <source>%1 was created, but its deploy was refused: %2</source>
        <translation>%1 wurde angelegt, aber sein Deploy wurde abgelehnt: %2</translation>
    </message>
    <message>
        <source>Choosing a file needs the package qml6-module-qt-labs-folderlistmodel, which is not installed: type the file&apos;s path instead, or install it (sudo apt install qml6-module-qt-labs-folderlistmodel).</source>
        <translation>Zur Dateiauswahl wird das Paket qml6-module-qt-labs-folderlistmodel benötigt, das nicht installiert ist: Geben Sie den Pfad der Datei ein oder installieren Sie es (sudo apt install qml6-module-qt-labs-folderlistmodel).</translation>
    </message>
    <message>
        <source>Say which image to deploy, as docker pull names it (nginx:1.27)</source>
        <translation>Geben Sie das Image an, wie docker pull es nennt (nginx:1.27)</translation>
    </message>
</context>
<context>
    <name>pando::desktop::AppEventsModel</name>
    <message>
        <source>Pando (%1)</source>
        <translation>Pando (%1)</translation>
    </message>
    <message>
        <source>%1 failed: %2</source>
        <translation>%1 fehlgeschlagen: %2</translation>
    </message>
    <message>
        <source>The app&apos;s history comes from the audit log, which this account may not read (only administrators may): %1. What happens while this tab is open is shown below.</source>
        <translation>Der Verlauf der App stammt aus dem Audit-Protokoll, das dieses Konto nicht lesen darf (nur Administratoren dürfen das): %1. Was geschieht, während dieser Reiter offen ist, wird unten angezeigt.</translation>
    </message>
    <message>
        <source>The app&apos;s history could not be read: %1</source>
        <translation>Der Verlauf der App konnte nicht gelesen werden: %1</translation>
    </message>
    <message>
        <source>wrote %1, over its limit of %2: Pando stopped it</source>
        <translation>%1 geschrieben, über ihrer Grenze von %2: Pando hat sie angehalten</translation>
    </message>
    <message>
        <source>wrote %1, over its limit of %2</source>
        <translation>%1 geschrieben, über ihrer Grenze von %2</translation>
    </message>
    <message>
        <source>Deploy succeeded</source>
        <translation>Deployment erfolgreich</translation>
    </message>
    <message>
        <source>Deploy failed</source>
        <translation>Deployment fehlgeschlagen</translation>
    </message>
    <message>
        <source>Secret %1 set</source>
        <translation>Geheimnis %1 gesetzt</translation>
    </message>
    <message>
        <source>Secret %1 removed</source>
        <translation>Geheimnis %1 entfernt</translation>
    </message>
    <message>
        <source>Backup of %1</source>
        <translation>Sicherung von %1</translation>
    </message>
    <message>
        <source>Service %1 removed</source>
        <translation>Dienst %1 entfernt</translation>
    </message>
    <message>
        <source>ref %1</source>
        <translation>Ref %1</translation>
    </message>
    <message>
        <source>unhealthy: %1</source>
        <translation>ungesund: %1</translation>
    </message>
    <message>
        <source>it had exited (exit code %1)</source>
        <translation>er war beendet (Exit-Code %1)</translation>
    </message>
    <message>
        <source>Refused: %1</source>
        <translation>Abgelehnt: %1</translation>
    </message>
</context>
<context>
    <name>pando::desktop::AppHookModel</name>
    <message>
        <source>deploy %1</source>
        <translation>Deploy %1</translation>
    </message>
    <message>
        <source>accepted</source>
        <translation>angenommen</translation>
    </message>
    <message>
        <source>deployed</source>
        <translation>deployt</translation>
    </message>
    <message>
        <source>ignored</source>
        <translation>ignoriert</translation>
    </message>
    <message>
        <source>failed</source>
        <translation>fehlgeschlagen</translation>
    </message>
    <message>
        <source>on push, through the forge&apos;s webhook</source>
        <translation>bei Push, über den Webhook der Forge</translation>
    </message>
    <message>
        <source>by polling the repository</source>
        <translation>durch Abfragen des Repositorys</translation>
    </message>
    <message>
        <source>off</source>
        <translation>aus</translation>
    </message>
    <message>
        <source>tags matching %1</source>
        <translation>Tags passend zu %1</translation>
    </message>
    <message>
        <source>branch %1</source>
        <translation>Branch %1</translation>
    </message>
    <message>
        <source>This computer&apos;s engine answers only this computer. A forge reaches the webhook while Settings serves teammates (&quot;Let teammates use this computer&apos;s engine&quot;): at that server&apos;s address, https://THIS-COMPUTER:PORT, followed by this path; tell the forge to accept the server&apos;s own certificate.</source>
        <translation>Die Engine dieses Computers antwortet nur diesem Computer. Eine Forge erreicht den Webhook, während die Einstellungen Teammitglieder bedienen („Teammitglieder die Engine dieses Computers nutzen lassen“): unter der Adresse dieses Servers, https://DIESER-COMPUTER:PORT, gefolgt von diesem Pfad; sag der Forge, dass sie das eigene Zertifikat des Servers annehmen soll.</translation>
    </message>
    <message>
        <source>The address this desktop reaches the install at: the forge must reach it too.</source>
        <translation>Die Adresse, unter der dieser Desktop die Installation erreicht: die Forge muss sie auch erreichen.</translation>
    </message>
    <message>
        <source>none yet</source>
        <translation>noch keines</translation>
    </message>
    <message>
        <source>someone</source>
        <translation>jemandem</translation>
    </message>
    <message>
        <source>set by %1</source>
        <translation>gesetzt von %1</translation>
    </message>
    <message>
        <source>set by %1 at %2</source>
        <translation>gesetzt von %1 um %2</translation>
    </message>
    <message numerus="yes">
        <source>every %n hour(s)</source>
        <translation>
            <numerusform>jede Stunde</numerusform>
            <numerusform>alle %n Stunden</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>every %n minute(s)</source>
        <translation>
            <numerusform>jede Minute</numerusform>
            <numerusform>alle %n Minuten</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>every %n second(s)</source>
        <translation>
            <numerusform>jede Sekunde</numerusform>
            <numerusform>alle %n Sekunden</numerusform>
        </translation>
    </message>
    <message>
        <source>not polled yet</source>
        <translation>noch nicht abgefragt</translation>
    </message>
    <message>
        <source>the poll at %1 failed: %2</source>
        <translation>die Abfrage um %1 schlug fehl: %2</translation>
    </message>
    <message>
        <source>last polled at %1, at commit %2</source>
        <translation>zuletzt abgefragt um %1, bei Commit %2</translation>
    </message>
    <message>
        <source>last polled at %1</source>
        <translation>zuletzt abgefragt um %1</translation>
    </message>
    <message>
        <source>Polled %1; %2</source>
        <translation>Abgefragt %1; %2</translation>
    </message>
    <message>
        <source>%1 (%2)</source>
        <translation>%1 (%2)</translation>
    </message>
    <message>
        <source>type the secret to set, or make a new one instead</source>
        <translation>gib das zu setzende Geheimnis ein, oder erzeuge stattdessen ein neues</translation>
    </message>
    <message>
        <source>type the address the forge reaches this install at</source>
        <translation>gib die Adresse ein, unter der die Forge diese Installation erreicht</translation>
    </message>
    <message>
        <source>Registered on the forge at %1 (hook %2)</source>
        <translation>Bei der Forge registriert unter %1 (Hook %2)</translation>
    </message>
    <message>
        <source>preview removed</source>
        <translation>Vorschau entfernt</translation>
    </message>
</context>
<context>
    <name>pando::desktop::AppLink</name>
    <message>
        <source>not routed yet</source>
        <translation>noch ohne Route</translation>
    </message>
    <message>
        <source>Open through %1</source>
        <translation>Über %1 öffnen</translation>
    </message>
    <message>
        <source>%1 through %2</source>
        <translation>%1 über %2</translation>
    </message>
    <message>
        <source>The app is reached once it was deployed</source>
        <translation>Die App ist erreichbar, sobald sie bereitgestellt wurde</translation>
    </message>
    <message>
        <source>Open %1 in the browser</source>
        <translation>%1 im Browser öffnen</translation>
    </message>
    <message>
        <source>Opens the app on this computer through a tunnel to %1, over the connection&apos;s TLS; on that machine it answers at %2</source>
        <translation>Öffnet die App auf diesem Computer durch einen Tunnel zu %1, über das TLS der Verbindung; auf jenem Rechner antwortet sie unter %2</translation>
    </message>
    <message>
        <source>%1 (%2)</source>
        <translation>%1 (%2)</translation>
    </message>
</context>
<context>
    <name>pando::desktop::AppLogSource</name>
    <message>
        <source>The log stream ended</source>
        <translation>Der Protokollstrom ist beendet</translation>
    </message>
</context>
<context>
    <name>pando::desktop::AppPreviewsModel</name>
    <message>
        <source>%1 (fork)</source>
        <translation>%1 (Fork)</translation>
    </message>
    <message>
        <source>being made or removed</source>
        <translation>wird erstellt oder entfernt</translation>
    </message>
    <message>
        <source>removing</source>
        <translation>wird entfernt</translation>
    </message>
    <message>
        <source>removed %1 unless something is pushed</source>
        <translation>wird am %1 entfernt, wenn nichts gepusht wird</translation>
    </message>
</context>
<context>
    <name>pando::desktop::AppSettings</name>
    <message>
        <source>%1 of %2 committed</source>
        <translation>%1 von %2 zugesagt</translation>
    </message>
    <message>
        <source>%1 committed, total unknown</source>
        <translation>%1 zugesagt, Gesamtmenge unbekannt</translation>
    </message>
    <message>
        <source>%1, %2 free</source>
        <translation>%1, %2 frei</translation>
    </message>
    <message>
        <source>%1 (%2)</source>
        <translation>%1 (%2)</translation>
    </message>
    <message>
        <source>%1; apps cannot be held to a disk limit here</source>
        <translation>%1; Apps können hier nicht an eine Festplattengrenze gebunden werden</translation>
    </message>
    <message>
        <source>%1 — %2</source>
        <translation>%1 — %2</translation>
    </message>
    <message>
        <source>Spec changed %1</source>
        <translation>Spezifikation geändert %1</translation>
    </message>
    <message>
        <source>No disk limit</source>
        <translation>Keine Festplattengrenze</translation>
    </message>
    <message>
        <source>At most %1 written in its container; past it, Pando warns</source>
        <translation>Höchstens %1 in ihrem Container geschrieben; darüber warnt Pando</translation>
    </message>
    <message>
        <source>At most %1 written in its container; past it, Pando stops the app</source>
        <translation>Höchstens %1 in ihrem Container geschrieben; darüber hält Pando die App an</translation>
    </message>
    <message>
        <source>Name the variable in row %1 of the environment</source>
        <translation>Benennen Sie die Variable in Zeile %1 der Umgebung</translation>
    </message>
    <message>
        <source>%1 is in the environment twice</source>
        <translation>%1 steht zweimal in der Umgebung</translation>
    </message>
    <message>
        <source>Name the secret</source>
        <translation>Benennen Sie das Geheimnis</translation>
    </message>
    <message>
        <source>Enter the secret&apos;s value</source>
        <translation>Geben Sie den Wert des Geheimnisses ein</translation>
    </message>
    <message>
        <source>Say which file the backup goes to</source>
        <translation>Geben Sie an, in welche Datei die Sicherung geht</translation>
    </message>
    <message>
        <source>Cannot write %1: %2</source>
        <translation>%1 kann nicht geschrieben werden: %2</translation>
    </message>
    <message>
        <source>%1 received from %2</source>
        <translation>%1 von %2 empfangen</translation>
    </message>
    <message>
        <source>%1 written to %2</source>
        <translation>%1 in %2 geschrieben</translation>
    </message>
    <message>
        <source>The backup failed: %1</source>
        <translation>Die Sicherung ist fehlgeschlagen: %1</translation>
    </message>
    <message numerus="yes">
        <source>%1; build cache %2 in %n image(s)</source>
        <translation>
            <numerusform>%1; Build-Cache %2 in %n Image</numerusform>
            <numerusform>%1; Build-Cache %2 in %n Images</numerusform>
        </translation>
    </message>
    <message>
        <source>%1; builder cache %2 (%3 reclaimable: docker builder prune)</source>
        <translation>%1; Builder-Cache %2 (%3 freigebbar: docker builder prune)</translation>
    </message>
    <message>
        <source>Backing up %1…</source>
        <translation>%1 wird gesichert…</translation>
    </message>
    <message>
        <source>Say which archive to restore from</source>
        <translation>Geben Sie an, aus welchem Archiv wiederhergestellt wird</translation>
    </message>
    <message>
        <source>Cannot read %1: %2</source>
        <translation>%1 kann nicht gelesen werden: %2</translation>
    </message>
    <message>
        <source>%1 is empty</source>
        <translation>%1 ist leer</translation>
    </message>
    <message>
        <source>Restoring %1 from %2…</source>
        <translation>%1 wird aus %2 wiederhergestellt…</translation>
    </message>
    <message>
        <source>%1 of %2 sent</source>
        <translation>%1 von %2 gesendet</translation>
    </message>
    <message>
        <source>%1 sent; the app stops while its volume is restored…</source>
        <translation>%1 gesendet; die App hält an, solange ihr Volume wiederhergestellt wird…</translation>
    </message>
    <message>
        <source>Volume %1 restored from %2</source>
        <translation>Volume %1 aus %2 wiederhergestellt</translation>
    </message>
    <message>
        <source>The restore failed: %1</source>
        <translation>Die Wiederherstellung ist fehlgeschlagen: %1</translation>
    </message>
</context>
<context>
    <name>pando::desktop::ApprovalsModel</name>
    <message>
        <source>less than a minute</source>
        <translation>weniger als einer Minute</translation>
    </message>
    <message numerus="yes">
        <source>%n minute(s)</source>
        <translation>
            <numerusform>%n Minute</numerusform>
            <numerusform>%n Minuten</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n hour(s)</source>
        <translation>
            <numerusform>%n Stunde</numerusform>
            <numerusform>%n Stunden</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n day(s)</source>
        <translation>
            <numerusform>%n Tag</numerusform>
            <numerusform>%n Tagen</numerusform>
        </translation>
    </message>
    <message>
        <source>in %1</source>
        <translation>in %1</translation>
    </message>
    <message>
        <source>%1 ago</source>
        <translation>vor %1</translation>
    </message>
    <message>
        <source>Deploy %1</source>
        <translation>%1 bereitstellen</translation>
    </message>
    <message>
        <source>Deploy of %1</source>
        <translation>Bereitstellung von %1</translation>
    </message>
    <message>
        <source>Pipeline step %1</source>
        <translation>Pipeline-Schritt %1</translation>
    </message>
    <message>
        <source>deploy</source>
        <translation>Bereitstellung</translation>
    </message>
    <message>
        <source>pipeline step</source>
        <translation>Pipeline-Schritt</translation>
    </message>
    <message>
        <source>never expires</source>
        <translation>läuft nie ab</translation>
    </message>
    <message>
        <source>expired</source>
        <translation>abgelaufen</translation>
    </message>
    <message>
        <source>expires %1</source>
        <translation>läuft %1 ab</translation>
    </message>
    <message>
        <source>asked %1</source>
        <translation>%1 angefragt</translation>
    </message>
    <message>
        <source>App</source>
        <translation>App</translation>
    </message>
    <message>
        <source>Why it waits</source>
        <translation>Warum sie wartet</translation>
    </message>
    <message>
        <source>Commit</source>
        <translation>Commit</translation>
    </message>
    <message>
        <source>Repository</source>
        <translation>Repository</translation>
    </message>
    <message>
        <source>%1 (was %2)</source>
        <translation>%1 (vorher %2)</translation>
    </message>
    <message>
        <source>Image built from</source>
        <translation>Image gebaut aus</translation>
    </message>
    <message>
        <source>Port</source>
        <translation>Port</translation>
    </message>
    <message>
        <source>no limit</source>
        <translation>keine Grenze</translation>
    </message>
    <message>
        <source>Memory</source>
        <translation>Speicher</translation>
    </message>
    <message>
        <source>CPUs</source>
        <translation>CPUs</translation>
    </message>
    <message>
        <source>Outbound network</source>
        <translation>Ausgehendes Netzwerk</translation>
    </message>
    <message>
        <source>Command</source>
        <translation>Befehl</translation>
    </message>
    <message>
        <source>Environment</source>
        <translation>Umgebung</translation>
    </message>
    <message>
        <source>Notes</source>
        <translation>Hinweise</translation>
    </message>
    <message>
        <source>Serving now</source>
        <translation>Jetzt in Betrieb</translation>
    </message>
    <message>
        <source>nothing (first deploy)</source>
        <translation>nichts (erste Bereitstellung)</translation>
    </message>
    <message>
        <source>deploy %1 at %2</source>
        <translation>Bereitstellung %1 (Commit %2)</translation>
    </message>
    <message>
        <source>Message</source>
        <translation>Nachricht</translation>
    </message>
    <message>
        <source>Pipeline</source>
        <translation>Pipeline</translation>
    </message>
    <message>
        <source>Job</source>
        <translation>Job</translation>
    </message>
    <message>
        <source>Run</source>
        <translation>Lauf</translation>
    </message>
    <message>
        <source>#%1 (%2)</source>
        <translation>#%1 (%2)</translation>
    </message>
    <message>
        <source>Step</source>
        <translation>Schritt</translation>
    </message>
    <message>
        <source>Input %1</source>
        <translation>Eingabe %1</translation>
    </message>
    <message>
        <source>%1 — %2</source>
        <translation>%1 — %2</translation>
    </message>
</context>
<context>
    <name>pando::desktop::AppsModel</name>
    <message>
        <source>queued</source>
        <translation>in der Warteschlange</translation>
    </message>
    <message>
        <source>deploying</source>
        <translation>wird bereitgestellt</translation>
    </message>
    <message>
        <source>waiting for approval</source>
        <translation>wartet auf Freigabe</translation>
    </message>
    <message>
        <source>succeeded</source>
        <translation>erfolgreich</translation>
    </message>
    <message>
        <source>failed</source>
        <translation>fehlgeschlagen</translation>
    </message>
    <message>
        <source>cancelled</source>
        <translation>abgebrochen</translation>
    </message>
    <message>
        <source>rejected</source>
        <translation>abgelehnt</translation>
    </message>
    <message>
        <source>fetching the source</source>
        <translation>Quelle wird geholt</translation>
    </message>
    <message>
        <source>detecting the build</source>
        <translation>Build wird erkannt</translation>
    </message>
    <message>
        <source>planning</source>
        <translation>Planung</translation>
    </message>
    <message>
        <source>building the image</source>
        <translation>Image wird gebaut</translation>
    </message>
    <message>
        <source>starting the container</source>
        <translation>Container wird gestartet</translation>
    </message>
    <message>
        <source>checking health</source>
        <translation>Zustand wird geprüft</translation>
    </message>
    <message>
        <source>switching traffic</source>
        <translation>Datenverkehr wird umgeschaltet</translation>
    </message>
    <message>
        <source>retiring the old version</source>
        <translation>alte Version wird stillgelegt</translation>
    </message>
    <message>
        <source>not deployed</source>
        <translation>nicht bereitgestellt</translation>
    </message>
    <message>
        <source>removing</source>
        <translation>wird entfernt</translation>
    </message>
    <message>
        <source>never deployed</source>
        <translation>nie bereitgestellt</translation>
    </message>
    <message>
        <source>%1 (%2)</source>
        <translation>%1 (%2)</translation>
    </message>
    <message>
        <source>%1 at %2 (%3)</source>
        <translation>%1 am %2 (%3)</translation>
    </message>
    <message>
        <source>%1 failed: %2</source>
        <translation>%1 fehlgeschlagen: %2</translation>
    </message>
    <message>
        <source>running</source>
        <translation>läuft</translation>
    </message>
    <message>
        <source>in progress</source>
        <translation>in Arbeit</translation>
    </message>
    <message>
        <source>stopped</source>
        <translation>gestoppt</translation>
    </message>
    <message>
        <source>No connection</source>
        <translation>Keine Verbindung</translation>
    </message>
    <message>
        <source>Not connected to %1</source>
        <translation>Nicht mit %1 verbunden</translation>
    </message>
    <message>
        <source>Reconnecting to %1: %2</source>
        <translation>Neue Verbindung zu %1: %2</translation>
    </message>
    <message>
        <source>Connecting to %1…</source>
        <translation>Verbinde mit %1…</translation>
    </message>
    <message>
        <source>The engine on %1 is reachable</source>
        <translation>Die Engine auf %1 ist erreichbar</translation>
    </message>
    <message>
        <source>Cannot reach the engine on %1: %2</source>
        <translation>Die Engine auf %1 ist nicht erreichbar: %2</translation>
    </message>
    <message>
        <source>starting a deploy</source>
        <translation>Bereitstellung wird gestartet</translation>
    </message>
    <message>
        <source>%1 — %2</source>
        <translation>%1 — %2</translation>
    </message>
    <message>
        <source>unhealthy</source>
        <translation>antwortet nicht</translation>
    </message>
    <message>
        <source>starting</source>
        <translation>wird gestartet</translation>
    </message>
    <message>
        <source>stopping</source>
        <translation>wird angehalten</translation>
    </message>
    <message>
        <source>restarting</source>
        <translation>wird neu gestartet</translation>
    </message>
</context>
<context>
    <name>pando::desktop::ConnectedModel</name>
    <message>
        <source>since %1</source>
        <translation>seit %1</translation>
    </message>
</context>
<context>
    <name>pando::desktop::ConnectionsModel</name>
    <message>
        <source>This computer</source>
        <translation>Dieser Computer</translation>
    </message>
    <message>
        <source>Pairing with %1:%2 failed: %3</source>
        <translation>Kopplung mit %1:%2 fehlgeschlagen: %3</translation>
    </message>
    <message>
        <source>The install at %1:%2 answered without a token</source>
        <translation>Die Installation unter %1:%2 hat ohne Token geantwortet</translation>
    </message>
    <message>
        <source>access expired — ask its administrator for a new pairing link</source>
        <translation>Zugang abgelaufen — bitten Sie den Administrator der Installation um einen neuen Kopplungslink</translation>
    </message>
    <message>
        <source>access until %1</source>
        <translation>Zugang bis %1</translation>
    </message>
    <message>
        <source>d MMM yyyy</source>
        <comment>the date in &apos;access until&apos;</comment>
        <translation>d. MMM yyyy</translation>
    </message>
    <message numerus="yes">
        <source>%n day(s)</source>
        <comment>access ends in</comment>
        <translation>
            <numerusform>%n Tag</numerusform>
            <numerusform>%n Tagen</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n hour(s)</source>
        <comment>access ends in</comment>
        <translation>
            <numerusform>%n Stunde</numerusform>
            <numerusform>%n Stunden</numerusform>
        </translation>
    </message>
    <message>
        <source>less than an hour</source>
        <comment>access ends in</comment>
        <translation>weniger als einer Stunde</translation>
    </message>
    <message>
        <source>access ends in %1 — ask its administrator for a new pairing link</source>
        <translation>Zugang endet in %1 — bitten Sie den Administrator der Installation um einen neuen Kopplungslink</translation>
    </message>
</context>
<context>
    <name>pando::desktop::DeployDurations</name>
    <message>
        <source>%.1f s</source>
        <translation>%.1f s</translation>
    </message>
    <message>
        <source>%.0f s</source>
        <translation>%.0f s</translation>
    </message>
</context>
<context>
    <name>pando::desktop::DeployStepsModel</name>
    <message>
        <source>Fetch the source</source>
        <translation>Quelle holen</translation>
    </message>
    <message>
        <source>Detect the build</source>
        <translation>Build erkennen</translation>
    </message>
    <message>
        <source>Plan</source>
        <translation>Planen</translation>
    </message>
    <message>
        <source>Approval</source>
        <translation>Freigabe</translation>
    </message>
    <message>
        <source>Build the image</source>
        <translation>Image bauen</translation>
    </message>
    <message>
        <source>Start the container</source>
        <translation>Container starten</translation>
    </message>
    <message>
        <source>Check health</source>
        <translation>Zustand prüfen</translation>
    </message>
    <message>
        <source>Switch traffic</source>
        <translation>Datenverkehr umschalten</translation>
    </message>
    <message>
        <source>Retire the old version</source>
        <translation>Alte Version stilllegen</translation>
    </message>
    <message>
        <source>running</source>
        <translation>läuft</translation>
    </message>
</context>
<context>
    <name>pando::desktop::DeploysModel</name>
    <message>
        <source>rejected</source>
        <translation>abgelehnt</translation>
    </message>
    <message>
        <source>queued</source>
        <translation>in der Warteschlange</translation>
    </message>
    <message>
        <source>This deploy never got as far as a commit: deploy a ref instead</source>
        <translation>Dieser Deploy kam nie bis zu einem Commit: deploye stattdessen eine Ref</translation>
    </message>
    <message>
        <source>%1 — %2</source>
        <translation>%1 — %2</translation>
    </message>
</context>
<context>
    <name>pando::desktop::DesktopState</name>
    <message>
        <source>No connection</source>
        <translation>Keine Verbindung</translation>
    </message>
    <message numerus="yes">
        <source>%n approval(s) waiting</source>
        <translation>
            <numerusform>%n Freigabe wartet</numerusform>
            <numerusform>%n Freigaben warten</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n app(s) failing</source>
        <translation>
            <numerusform>%n App fehlerhaft</numerusform>
            <numerusform>%n Apps fehlerhaft</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n deploy(s) in progress</source>
        <translation>
            <numerusform>%n Bereitstellung läuft</numerusform>
            <numerusform>%n Bereitstellungen laufen</numerusform>
        </translation>
    </message>
    <message>
        <source>No apps yet</source>
        <translation>Noch keine Apps</translation>
    </message>
    <message>
        <source>All apps healthy</source>
        <translation>Alle Apps in Ordnung</translation>
    </message>
    <message>
        <source>This desktop was started with --server: start it without --server to use this computer&apos;s engine.</source>
        <translation>Dieser Desktop wurde mit --server gestartet: Starten Sie ihn ohne --server, um die Engine dieses Computers zu nutzen.</translation>
    </message>
    <message>
        <source>The token for %1 is missing: remove this connection and pair again.</source>
        <translation>Das Token für %1 fehlt: Entfernen Sie diese Verbindung und koppeln Sie erneut.</translation>
    </message>
    <message numerus="yes">
        <source>%n pipeline(s) failing</source>
        <translation>
            <numerusform>%n Pipeline fehlerhaft</numerusform>
            <numerusform>%n Pipelines fehlerhaft</numerusform>
        </translation>
    </message>
    <message>
        <source>Not serving teammates</source>
        <translation>Server für das Team aus</translation>
    </message>
    <message>
        <source>the initial token</source>
        <translation>das Anfangs-Token</translation>
    </message>
    <message>
        <source>Serving teammates · nobody connected</source>
        <translation>Server für das Team an · niemand verbunden</translation>
    </message>
    <message>
        <source>Serving teammates · %1 connected</source>
        <translation>Server für das Team an · %1 verbunden</translation>
    </message>
</context>
<context>
    <name>pando::desktop::DomainSettings</name>
    <message>
        <source>The install CA does not exist yet: Pando makes it when an app first needs a certificate from it (tls: internal, or a local name).</source>
        <translation>Die Installations-CA gibt es noch nicht: Pando erstellt sie, sobald eine App zum ersten Mal ein Zertifikat von ihr braucht (tls: internal oder ein lokaler Name).</translation>
    </message>
    <message>
        <source>Could not read the install CA: %1</source>
        <translation>Die Installations-CA konnte nicht gelesen werden: %1</translation>
    </message>
    <message>
        <source>Saved</source>
        <translation>Gespeichert</translation>
    </message>
    <message>
        <source>%1 — %2</source>
        <translation>%1 — %2</translation>
    </message>
    <message>
        <source>Could not save the install CA to %1: %2</source>
        <translation>Die Installations-CA konnte nicht unter %1 gespeichert werden: %2</translation>
    </message>
    <message>
        <source>Saved the install CA to %1</source>
        <translation>Installations-CA unter %1 gespeichert</translation>
    </message>
</context>
<context>
    <name>pando::desktop::EmbeddedServer</name>
    <message>
        <source>This desktop shows a remote install; its own server is set up there.</source>
        <translation>Dieser Desktop zeigt eine entfernte Installation; deren eigener Server wird dort eingerichtet.</translation>
    </message>
    <message>
        <source>Starting…</source>
        <translation>Wird gestartet…</translation>
    </message>
    <message>
        <source>Stopping…</source>
        <translation>Wird beendet…</translation>
    </message>
    <message>
        <source>Not serving: %1</source>
        <translation>Nicht bereitgestellt: %1</translation>
    </message>
    <message>
        <source>Serving teammates over TLS on %1:%2</source>
        <translation>Für das Team per TLS bereitgestellt auf %1:%2</translation>
    </message>
    <message>
        <source>Off: only this computer uses its engine.</source>
        <translation>Aus: nur dieser Computer nutzt seine Engine.</translation>
    </message>
    <message>
        <source>&quot;%1&quot; is not an IP address (use 0.0.0.0 for every network)</source>
        <translation>„%1“ ist keine IP-Adresse (0.0.0.0 für alle Netzwerke)</translation>
    </message>
    <message>
        <source>the port must be 1-65535</source>
        <translation>der Port muss zwischen 1 und 65535 liegen</translation>
    </message>
    <message>
        <source>No pairing link for %1: %2</source>
        <translation>Kein Kopplungslink für %1: %2</translation>
    </message>
    <message>
        <source>For %1; works once, until %2. Send it privately: whoever uses it first gets %1&apos;s access.</source>
        <translation>Für %1; gilt einmal, bis %2. Schicken Sie ihn vertraulich: Wer ihn zuerst nutzt, erhält den Zugang von %1.</translation>
    </message>
</context>
<context>
    <name>pando::desktop::InProcessSession</name>
    <message>
        <source>This computer</source>
        <translation>Dieser Computer</translation>
    </message>
</context>
<context>
    <name>pando::desktop::JobsModel</name>
    <message>
        <source>first: no job feeds it</source>
        <translation>zuerst: kein Job liefert ihm zu</translation>
    </message>
    <message>
        <source>after %1</source>
        <translation>nach %1</translation>
    </message>
    <message>
        <source>, </source>
        <translation>, </translation>
    </message>
    <message>
        <source>no inputs</source>
        <translation>keine Eingaben</translation>
    </message>
    <message>
        <source>never run</source>
        <translation>nie gelaufen</translation>
    </message>
    <message>
        <source>#%1 · %2</source>
        <translation>#%1 · %2</translation>
    </message>
    <message>
        <source>%1 (triggers)</source>
        <translation>%1 (löst aus)</translation>
    </message>
    <message>
        <source>%1, passed %2</source>
        <translation>%1, durchlaufen: %2</translation>
    </message>
    <message>
        <source>%1 — %2</source>
        <translation>%1 — %2</translation>
    </message>
</context>
<context>
    <name>pando::desktop::PaletteSearch</name>
    <message>
        <source>Apps</source>
        <translation>Apps</translation>
    </message>
    <message>
        <source>Pipelines</source>
        <translation>Pipelines</translation>
    </message>
    <message>
        <source>Approvals</source>
        <translation>Freigaben</translation>
    </message>
    <message>
        <source>Activity</source>
        <translation>Aktivität</translation>
    </message>
    <message>
        <source>Connections</source>
        <translation>Verbindungen</translation>
    </message>
    <message>
        <source>Settings</source>
        <translation>Einstellungen</translation>
    </message>
    <message>
        <source>view</source>
        <translation>Ansicht</translation>
    </message>
    <message>
        <source>app · %1</source>
        <translation>App · %1</translation>
    </message>
    <message>
        <source>pipeline · %1</source>
        <translation>Pipeline · %1</translation>
    </message>
    <message>
        <source>New app…</source>
        <translation>Neue App…</translation>
    </message>
    <message>
        <source>action · Ctrl+N</source>
        <translation>Aktion · Strg+N</translation>
    </message>
    <message>
        <source>Refresh</source>
        <translation>Aktualisieren</translation>
    </message>
    <message>
        <source>action · Ctrl+R</source>
        <translation>Aktion · Strg+R</translation>
    </message>
    <message>
        <source>Deploy %1</source>
        <translation>%1 bereitstellen</translation>
    </message>
    <message>
        <source>action · Ctrl+D</source>
        <translation>Aktion · Strg+D</translation>
    </message>
    <message>
        <source>Sources</source>
        <translation>Quellen</translation>
    </message>
</context>
<context>
    <name>pando::desktop::PipelinesModel</name>
    <message>
        <source>%1 — %2</source>
        <translation>%1 — %2</translation>
    </message>
    <message>
        <source>never run</source>
        <translation>noch nie gelaufen</translation>
    </message>
    <message>
        <source>%1 #%2 · %3</source>
        <translation>%1 #%2 · %3</translation>
    </message>
    <message>
        <source>on, for the pipelines an administrator allowed</source>
        <translation>an, für die Pipelines, die ein Administrator erlaubt hat</translation>
    </message>
    <message>
        <source>off: every task runs in a container</source>
        <translation>aus: jede Aufgabe läuft in einem Container</translation>
    </message>
    <message>
        <source>allowed</source>
        <translation>erlaubt</translation>
    </message>
    <message>
        <source>not allowed</source>
        <translation>nicht erlaubt</translation>
    </message>
    <message>
        <source>picked for them</source>
        <translation>werden für sie gewählt</translation>
    </message>
    <message>
        <source>repositories on this computer (file://): %1; the ssh-agent: %2; addresses on this computer or its link: %3; stable ports: %4; previews of pull requests from forks: %5; a deploy&apos;s output kept: %6</source>
        <translation>Repositorys auf diesem Computer (file://): %1; der ssh-agent: %2; Adressen auf diesem Computer oder seinem Link: %3; feste Ports: %4; Vorschauen für Pull Requests aus Forks: %5; Ausgabe eines Deploys aufbewahrt: %6</translation>
    </message>
    <message>
        <source>for ever</source>
        <translation>für immer</translation>
    </message>
    <message numerus="yes">
        <source>%n day(s) after it ends</source>
        <translation>
            <numerusform>%n Tag nach seinem Ende</numerusform>
            <numerusform>%n Tage nach seinem Ende</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>pando::desktop::ResourcesModel</name>
    <message>
        <source>%1 — %2</source>
        <translation>%1 — %2</translation>
    </message>
    <message>
        <source>checked %1</source>
        <translation>geprüft %1</translation>
    </message>
    <message>
        <source>never checked</source>
        <translation>nie geprüft</translation>
    </message>
    <message>
        <source>pinned to %1 in the config</source>
        <translation>in der Konfiguration auf %1 festgelegt</translation>
    </message>
    <message>
        <source>pinned to %1 by %2</source>
        <translation>von %2 auf %1 festgelegt</translation>
    </message>
    <message>
        <source>the check has not answered in 30 s; select the resource again to see what it found</source>
        <translation>die Prüfung hat in 30 s nicht geantwortet; die Ressource erneut auswählen, um zu sehen, was sie gefunden hat</translation>
    </message>
</context>
<context>
    <name>pando::desktop::RunTreeModel</name>
    <message>
        <source>%1 — %2</source>
        <translation>%1 — %2</translation>
    </message>
    <message>
        <source>%1/%2 #%3</source>
        <translation>%1/%2 #%3</translation>
    </message>
    <message>
        <source>triggered by hand</source>
        <translation>von Hand gestartet</translation>
    </message>
    <message>
        <source>triggered by %1</source>
        <translation>gestartet von %1</translation>
    </message>
    <message>
        <source>new version of %1</source>
        <translation>neue Version von %1</translation>
    </message>
    <message>
        <source>webhook of %1</source>
        <translation>Webhook von %1</translation>
    </message>
    <message>
        <source>after job %1 passed</source>
        <translation>nach erfolgreichem Job %1</translation>
    </message>
    <message>
        <source>%1, by %2</source>
        <translation>%1, von %2</translation>
    </message>
    <message numerus="yes">
        <source>%n step(s)</source>
        <translation>
            <numerusform>%n Schritt</numerusform>
            <numerusform>%n Schritte</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n unchanged</source>
        <translation>
            <numerusform>%n unverändert</numerusform>
            <numerusform>%n unverändert</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n failed</source>
        <translation>
            <numerusform>%n fehlgeschlagen</numerusform>
            <numerusform>%n fehlgeschlagen</numerusform>
        </translation>
    </message>
    <message>
        <source>rejected</source>
        <translation>abgelehnt</translation>
    </message>
    <message>
        <source>expired</source>
        <translation>abgelaufen</translation>
    </message>
    <message>
        <source>withdrawn</source>
        <translation>zurückgezogen</translation>
    </message>
    <message>
        <source>The output of this run was removed on %1, as its job&apos;s build_log_retention says; its steps are kept.</source>
        <translation>Die Ausgabe dieses Laufs wurde am %1 entfernt, wie es build_log_retention seines Jobs vorgibt; seine Schritte bleiben erhalten.</translation>
    </message>
</context>
<context>
    <name>pando::desktop::RunsModel</name>
    <message>
        <source>%1 — %2</source>
        <translation>%1 — %2</translation>
    </message>
    <message>
        <source>%1/%2 #%3</source>
        <translation>%1/%2 #%3</translation>
    </message>
    <message>
        <source>%1 #%2</source>
        <translation>%1 #%2</translation>
    </message>
</context>
<context>
    <name>pando::desktop::RuntimesStatus</name>
    <message>
        <source>Runtimes: cannot tell</source>
        <translation>Laufzeitumgebungen: unbekannt</translation>
    </message>
    <message>
        <source>%1 reachable</source>
        <translation>%1 erreichbar</translation>
    </message>
    <message>
        <source>%1 unreachable</source>
        <translation>%1 nicht erreichbar</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1: %2</translation>
    </message>
    <message>
        <source>No runtime</source>
        <translation>Keine Laufzeitumgebung</translation>
    </message>
    <message>
        <source>Edge: cannot tell</source>
        <translation>Edge: unbekannt</translation>
    </message>
    <message>
        <source>Edge down</source>
        <translation>Edge ausgefallen</translation>
    </message>
    <message>
        <source>Apps served by Pando</source>
        <translation>Apps von Pando selbst ausgeliefert</translation>
    </message>
    <message>
        <source>Apps stop answering while Pando is stopped; with Caddy installed they would not (see the user guide, The edge).</source>
        <translation>Apps antworten nicht, solange Pando gestoppt ist; mit installiertem Caddy täten sie es (siehe Benutzerhandbuch, Die Edge).</translation>
    </message>
    <message>
        <source>Edge serving</source>
        <translation>Edge liefert aus</translation>
    </message>
    <message numerus="yes">
        <source>%1 · failing certificates: %n</source>
        <translation>
            <numerusform>%1 · fehlgeschlagene Zertifikate: %n</numerusform>
            <numerusform>%1 · fehlgeschlagene Zertifikate: %n</numerusform>
        </translation>
    </message>
    <message>
        <source>cannot tell: %1</source>
        <translation>unbekannt: %1</translation>
    </message>
    <message numerus="yes">
        <source>%n signing keys, newest first: %1</source>
        <translation>
            <numerusform>%n Signaturschlüssel, neuester zuerst: %1</numerusform>
            <numerusform>%n Signaturschlüssel, neueste zuerst: %1</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>pando::desktop::SourceRepositoriesModel</name>
    <message>
        <source>private</source>
        <translation>privat</translation>
    </message>
    <message>
        <source>public</source>
        <translation>öffentlich</translation>
    </message>
    <message>
        <source>%1 — %2</source>
        <translation>%1 — %2</translation>
    </message>
</context>
<context>
    <name>pando::desktop::SourcesModel</name>
    <message>
        <source>deploy key %1</source>
        <translation>Deploy-Schlüssel %1</translation>
    </message>
    <message>
        <source>token</source>
        <translation>Token</translation>
    </message>
    <message>
        <source>token as %1</source>
        <translation>Token als %1</translation>
    </message>
    <message>
        <source>%1 (tested %2)</source>
        <translation>%1 (geprüft %2)</translation>
    </message>
    <message>
        <source>never tested</source>
        <translation>nie geprüft</translation>
    </message>
    <message>
        <source>Added %1. Apps whose repository it covers read through it from their next change.</source>
        <translation>%1 hinzugefügt. Apps, deren Repository sie abdeckt, lesen ab ihrer nächsten Änderung über sie.</translation>
    </message>
    <message>
        <source>Added %1. Add the public half of key %2 to the repositories as a deploy key.</source>
        <translation>%1 hinzugefügt. Fügen Sie den öffentlichen Teil von Schlüssel %2 den Repositorys als Deploy-Schlüssel hinzu.</translation>
    </message>
    <message>
        <source>%1 reads %2 (at %3).</source>
        <translation>%1 liest %2 (bei %3).</translation>
    </message>
    <message>
        <source>Removed %1 and its credential.</source>
        <translation>%1 und seine Zugangsdaten entfernt.</translation>
    </message>
    <message>
        <source>GitHub App %1, installation %2</source>
        <translation>GitHub App %1, Installation %2</translation>
    </message>
    <message>
        <source>OAuth app %1</source>
        <translation>OAuth-App %1</translation>
    </message>
    <message>
        <source>The forge did not send the browser back in time.</source>
        <translation>Die Forge hat den Browser nicht rechtzeitig zurückgeschickt.</translation>
    </message>
    <message>
        <source>Start again, and finish on the forge&apos;s page within ten minutes.</source>
        <translation>Beginnen Sie erneut und schließen Sie auf der Seite der Forge innerhalb von zehn Minuten ab.</translation>
    </message>
    <message>
        <source>Authorized %1 again.</source>
        <translation>%1 erneut autorisiert.</translation>
    </message>
    <message>
        <source>Waiting for the forge: authorize Pando on the page that opened in your browser.</source>
        <translation>Warten auf die Forge: Autorisieren Sie Pando auf der Seite, die sich in Ihrem Browser geöffnet hat.</translation>
    </message>
    <message>
        <source>Stopped waiting for the forge; nothing changed.</source>
        <translation>Warten auf die Forge beendet; nichts wurde geändert.</translation>
    </message>
    <message>
        <source>The registry of %1 accepts its login.</source>
        <translation>Die Registry von %1 nimmt die Anmeldung an.</translation>
    </message>
    <message>
        <source>%1 reads %2 (%3).</source>
        <translation>%1 liest %2 (%3).</translation>
    </message>
</context>
<context>
    <name>pando::desktop::StateStyle</name>
    <message>
        <source>healthy</source>
        <translation>gesund</translation>
    </message>
    <message>
        <source>in progress</source>
        <translation>in Arbeit</translation>
    </message>
    <message>
        <source>waiting for approval</source>
        <translation>wartet auf Freigabe</translation>
    </message>
    <message>
        <source>failed</source>
        <translation>fehlgeschlagen</translation>
    </message>
    <message>
        <source>unchanged</source>
        <translation>unverändert</translation>
    </message>
    <message>
        <source>stopped</source>
        <translation>gestoppt</translation>
    </message>
    <message>
        <source>not started</source>
        <translation>nicht gestartet</translation>
    </message>
</context>
<context>
    <name>pando::desktop::TrayIcon</name>
    <message>
        <source>Pando — %1</source>
        <translation>Pando — %1</translation>
    </message>
    <message>
        <source>Open Pando</source>
        <translation>Pando öffnen</translation>
    </message>
    <message>
        <source>No apps yet</source>
        <translation>Noch keine Apps</translation>
    </message>
    <message>
        <source>%1 — %2</source>
        <translation>%1 — %2</translation>
    </message>
    <message numerus="yes">
        <source>%n approval(s) waiting</source>
        <translation>
            <numerusform>%n Freigabe wartet</numerusform>
            <numerusform>%n Freigaben warten</numerusform>
        </translation>
    </message>
    <message>
        <source>Quit</source>
        <translation>Beenden</translation>
    </message>
    <message>
        <source>Approve… %1</source>
        <translation>Freigeben… %1</translation>
    </message>
    <message>
        <source>Approval requested: %1</source>
        <translation>Freigabe angefragt: %1</translation>
    </message>
    <message>
        <source>%1 asked. Click to see what will change and decide.</source>
        <translation>%1 hat angefragt. Klicken Sie, um zu sehen, was sich ändert, und zu entscheiden.</translation>
    </message>
    <message>
        <source>%1 deployed</source>
        <translation>%1 bereitgestellt</translation>
    </message>
    <message>
        <source>Deploy of %1 failed</source>
        <translation>Bereitstellung von %1 fehlgeschlagen</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1: %2</translation>
    </message>
    <message>
        <source>Run #%1 of %2/%3 %4</source>
        <translation>Lauf #%1 von %2/%3: %4</translation>
    </message>
</context>
</TS>
