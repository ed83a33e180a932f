"""The instance role and profile that let instances read the artifact bucket (and Beanstalk's role)."""

from __future__ import annotations

from troposphere import Ref, Sub, iam

from formwright.transform.cloudformation.context import Build

INSTANCE_PROFILE = "ArtifactReaderProfile"
INSTANCE_ROLE = "ArtifactReaderRole"
BEANSTALK_PROFILE = "BeanstalkInstanceProfile"
BEANSTALK_ROLE = "BeanstalkInstanceRole"
_EC2_TRUST = {
    "Version": "2012-10-17",
    "Statement": [
        {"Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com"}, "Action": "sts:AssumeRole"}
    ],
}


def _role_and_profile(build: Build, role: str, profile: str, **role_properties: object) -> str:
    if profile not in build.template.resources:
        build.template.add_resource(iam.Role(role, AssumeRolePolicyDocument=_EC2_TRUST, **role_properties))
        build.template.add_resource(iam.InstanceProfile(profile, Roles=[Ref(role)]))
        build.capabilities.add("CAPABILITY_IAM")
    return profile


def artifact_reader(build: Build) -> str:
    """The instance profile granting read access to the artifact bucket; returns its logical id."""
    policy = iam.Policy(PolicyName="read-artifacts", PolicyDocument={
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Action": ["s3:GetObject"],
                       "Resource": Sub("arn:${AWS::Partition}:s3:::${" + build.bucket() + "}/*")}],
    })
    return _role_and_profile(build, INSTANCE_ROLE, INSTANCE_PROFILE, Policies=[policy])


def beanstalk_instance(build: Build) -> str:
    """The instance profile of Beanstalk environments (the web tier managed policy)."""
    return _role_and_profile(build, BEANSTALK_ROLE, BEANSTALK_PROFILE, ManagedPolicyArns=[
        Sub("arn:${AWS::Partition}:iam::aws:policy/AWSElasticBeanstalkWebTier")])
