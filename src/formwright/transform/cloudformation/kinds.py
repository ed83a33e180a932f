"""The TOSCA types the CloudFormation plugin understands, and how nodes are classified."""

from __future__ import annotations

from formwright.tosca.model import Node

COMPUTE = "tosca.nodes.Compute"
SOFTWARE = "tosca.nodes.SoftwareComponent"
WEBSERVER = "tosca.nodes.WebServer"
APACHE = "tosca.nodes.WebServer.Apache"
NODEJS = "tosca.nodes.WebServer.Nodejs"
WEBAPP = "tosca.nodes.WebApplication"
DBMS = "tosca.nodes.DBMS"
DATABASE = "tosca.nodes.Database"
MYSQL_DBMS = "tosca.nodes.DBMS.MySQL"
MYSQL_DATABASE = "tosca.nodes.Database.MySQL"
JAVA_RUNTIME = "tosca.nodes.JavaRuntime"
JAVA_APP = "tosca.nodes.JavaApplication"
BLOCK_STORAGE = "tosca.nodes.BlockStorage"

HOSTED_ON = "tosca.relationships.HostedOn"
CONNECTS_TO = "tosca.relationships.ConnectsTo"
DEPENDS_ON = "tosca.relationships.DependsOn"
ATTACHES_TO = "tosca.relationships.AttachesTo"

SUPPORTED_NODES = (COMPUTE, SOFTWARE, WEBSERVER, APACHE, NODEJS, WEBAPP, DBMS, DATABASE, MYSQL_DBMS,
                   MYSQL_DATABASE, JAVA_RUNTIME, JAVA_APP, BLOCK_STORAGE)
SUPPORTED_RELATIONSHIPS = (HOSTED_ON, CONNECTS_TO, DEPENDS_ON, ATTACHES_TO)


def is_mysql(node: Node) -> bool:
    """A MySQL DBMS or database: it becomes Amazon RDS."""
    return node.is_a(MYSQL_DBMS) or node.is_a(MYSQL_DATABASE)


def is_java(node: Node) -> bool:
    """A Java runtime or application: it becomes Elastic Beanstalk."""
    return node.is_a(JAVA_RUNTIME) or node.is_a(JAVA_APP)
