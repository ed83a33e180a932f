#!/bin/bash
# Tells the shop where its database is (PHP reads these from Apache's environment). Apache's configuration
# folder is /etc/httpd/conf.d on Amazon Linux, /etc/apache2/conf-enabled on Debian and Ubuntu.
set -euo pipefail
conf=/etc/httpd/conf.d
if [ -d /etc/apache2/conf-enabled ]; then
  conf=/etc/apache2/conf-enabled
fi
cat > "${conf}/shop-env.conf" <<CONF
SetEnv DATABASE_HOST "${database_host}"
SetEnv DATABASE_PORT "${database_port}"
SetEnv DATABASE_NAME "${database_name}"
SetEnv DATABASE_USER "${database_user}"
SetEnv DATABASE_PASSWORD "${database_password}"
CONF
