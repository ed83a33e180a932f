#!/bin/bash
# Tells the shop where its database is (PHP reads these from Apache's environment).
set -euo pipefail
cat > /etc/httpd/conf.d/shop-env.conf <<CONF
SetEnv DATABASE_HOST "${database_host}"
SetEnv DATABASE_PORT "${database_port}"
SetEnv DATABASE_NAME "${database_name}"
SetEnv DATABASE_USER "${database_user}"
SetEnv DATABASE_PASSWORD "${database_password}"
CONF
