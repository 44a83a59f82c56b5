"""Word lists for the store generator: Spanish and English prose, topics, code.

Order matters: the generator gives earlier words of each list higher (Zipf-like) frequency,
so function words come first, then common content words. Changing a list changes every
generated store (the determinism test pins one seed's bytes, not these lists).
"""

from __future__ import annotations

ES_FUNCTION = """de la que el en y a los se del las un por con no una su para es al lo como
más pero sus le ya o este sí porque esta entre cuando muy sin sobre también me hasta hay
donde quien desde todo nos durante todos uno les ni contra otros ese eso ante ellos e esto
antes algunos qué unos yo otro otras otra él tanto esa estos mucho quienes nada muchos cual
poco ella estar estas algunas algo nosotros""".split()

ES_CONTENT = """servidor despliegue producción configuración base datos cliente factura
error fallo cambio versión prueba equipo semana mañana tarde noche cola tarea usuario
usuarios cuenta pago pagos registro registros copia seguridad clave certificado alerta
guardia incidente latencia memoria disco red tráfico caché índice búsqueda consulta tabla
columna migración esquema rama revisión entorno variable secreto permiso rol acceso
proceso trabajo script comando fichero archivo carpeta ruta enlace documento nota estado
decisión motivo problema solución parche arreglo mejora límite umbral tiempo espera
reintento conexión sesión token firma envío recepción respuesta petición método función
clase módulo paquete dependencia imagen contenedor nodo clúster réplica volumen copia
rendimiento coste precio plan contrato proveedor soporte ticket informe panel métrica
gráfico registro aviso correo mensaje canal reunión acuerdo propuesta objetivo riesgo
hay fue era tiene tienen puede pueden hace hizo quedó sigue funciona falla tarda vuelve
pasa cambia usamos usa revisar probar desplegar configurar migrar arreglar medir subir
bajar activar desactivar reiniciar borrar crear añadir quitar mover copiar restaurar
rápido lento nuevo viejo grande pequeño primero último siguiente anterior largo corto
alto bajo bueno malo mejor peor claro seguro posible necesario importante único común
ahora luego después antes siempre nunca todavía aún casi solo bien mal además incluso
lunes martes miércoles jueves viernes enero febrero marzo abril mayo junio julio agosto
septiembre octubre noviembre diciembre hora minuto segundo día mes año vez veces parte
Lucía Martín Jonas Diego Valentina Sofía Pablo Carmen Andrés Elena Tomás Irene""".split()

EN_FUNCTION = """the of and to a in is that for it on with as was be by this are at from
or an not have but we they which one all has were their there when if been so can will
no more about out up what only them into some than then its also after do how could two
other any these over most did may our new should those while each because before""".split()

EN_CONTENT = """server deploy production config database client invoice error failure
change version test team week morning afternoon night queue task user users account
payment payments record records backup key certificate alert call incident latency
memory disk network traffic cache index search query table column migration schema
branch review environment variable secret permission role access process job script
command file folder path link document note state decision reason problem fix patch
improvement limit threshold timeout retry connection session token signature request
response method function class module package dependency image container node cluster
replica volume performance cost price plan contract vendor support ticket report
dashboard metric chart log warning email message channel meeting agreement proposal
goal risk runs ran works fails takes returns keeps moved changed added removed
restarted measured checked fixed broke rolled merged tagged reverted released
fast slow old large small first last next previous long short high low good bad
better worse clear safe possible needed important single common now later always never
still almost just already again instead even today yesterday tomorrow hour minute
second day month year time times part Monday Tuesday Wednesday Thursday""".split()

# Systems a team's memory talks about, and what it says about them (English, Spanish).
COMPONENTS = """redis postgres kafka nginx celery django stripe sentry grafana prometheus
kubernetes argocd terraform vault elasticsearch rabbitmq minio cloudflare github gitlab
jenkins docker helm istio envoy traefik mysql mongodb clickhouse snowflake airflow dbt
spark flink keycloak auth0 okta twilio sendgrid mailgun pagerduty opsgenie datadog
newrelic loki tempo jaeger opentelemetry fastapi flask rails sidekiq resque webpack vite
nextjs react vue angular svelte tailwind storybook cypress playwright pytest jest mypy
ruff black poetry pip npm pnpm yarn bazel gradle maven kotlin swift flutter android ios
lambda fargate ecs eks gke aks cloudrun bigquery pubsub sqs sns dynamodb s3 gcs cdn dns
ssl vpn ldap sso saml oauth webhook cron backup ledger billing invoicing payroll checkout
cart catalog pricing search onboarding analytics reporting exports imports verifactu sepa
aeat sii ticketbai""".split()

ASPECTS = [
    ("eviction policy", "política de expulsión"), ("backups", "copias de seguridad"),
    ("rollback", "marcha atrás"), ("latency", "latencia"), ("migrations", "migraciones"),
    ("connection pool", "pool de conexiones"), ("timeouts", "tiempos de espera"),
    ("retries", "reintentos"), ("rate limits", "límites de peticiones"),
    ("monitoring", "monitorización"), ("alerting", "alertas"), ("upgrades", "actualizaciones"),
    ("costs", "costes"), ("access control", "control de acceso"), ("secrets", "secretos"),
    ("certificates", "certificados"), ("replication", "replicación"), ("failover", "conmutación"),
    ("capacity", "capacidad"), ("sharding", "particionado"), ("caching", "caché"),
    ("logging", "registros"), ("tracing", "trazas"), ("deploys", "despliegues"),
    ("configuration", "configuración"), ("performance", "rendimiento"),
    ("incidents", "incidentes"), ("on-call", "guardias"), ("testing", "pruebas"),
    ("schema", "esquema"), ("indexes", "índices"), ("queues", "colas"),
    ("workers", "trabajadores"), ("scheduling", "planificación"), ("quotas", "cuotas"),
    ("encryption", "cifrado"), ("auditing", "auditoría"), ("permissions", "permisos"),
    ("dependencies", "dependencias"), ("versioning", "versionado"), ("webhooks", "webhooks"),
    ("exports", "exportaciones"), ("imports", "importaciones"), ("billing", "facturación"),
    ("signatures", "firmas"), ("retention", "retención"), ("cleanup", "limpieza"),
    ("healthchecks", "comprobaciones de salud"), ("autoscaling", "autoescalado"),
    ("networking", "red"), ("storage", "almacenamiento"), ("compliance", "cumplimiento"),
    ("onboarding", "incorporación"), ("naming", "nomenclatura"), ("ownership", "responsables"),
    ("runbook", "procedimiento"), ("budget", "presupuesto"), ("vendors", "proveedores"),
    ("contracts", "contratos"), ("roadmap", "hoja de ruta"),
]

FOLDERS = "infra howto decisions incidents product people services data".split()

SYLLABLES = """ba be bi bo bu ca ce ci co cu da de di do du fa fe fi fo ga go gu la le li
lo lu ma me mi mo mu na ne ni no nu pa pe pi po pu ra re ri ro ru sa se si so su ta te ti
to tu va ve vi vo za zo al an ar el en er il in ir ol on or ul un ur""".split()

CODE_VERBS = "get set sync load dump check apply plan restart drain scale rotate".split()
NAMES = "Lucía Martín Jonas Diego Valentina Sofía Pablo Carmen Andrés Elena Tomás".split()
