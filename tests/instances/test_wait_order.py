"""With booting instances, what waits for signals is created as late as its dependents allow (fast: the
order alone). CloudFormation creates resources that do not depend on each other in parallel, so a
WaitCondition waits while the instance that signals it boots; the local cloud creates one at a time, so it
must make that instance first (the TOSCA transform's operation outputs: a WaitCondition no resource orders
after the instance that signals it, and a second instance that reads its Data)."""

from __future__ import annotations

from formwright.cloud.emulator.stack_record import order

RESOURCES = {
    "Handle": {"Type": "AWS::CloudFormation::WaitConditionHandle"},
    "Outputs": {"Type": "AWS::CloudFormation::WaitCondition", "Properties": {"Handle": {"Ref": "Handle"}}},
    "Producer": {"Type": "AWS::EC2::Instance", "CreationPolicy": {"ResourceSignal": {}},
                 "Properties": {"UserData": {"Fn::Base64": {"Ref": "Handle"}}}},
    "Reader": {"Type": "AWS::EC2::Instance",
               "Properties": {"UserData": {"Fn::Base64": {"Fn::GetAtt": ["Outputs", "Data"]}}}},
    "Group": {"Type": "AWS::EC2::SecurityGroup", "Properties": {}},
}


def test_waits_come_last_and_a_wait_condition_after_the_instance_that_signals_it() -> None:
    made = order(RESOURCES, {"Outputs": 2, "Producer": 1})
    assert made.index("Producer") < made.index("Outputs") < made.index("Reader")
    assert made.index("Group") < made.index("Producer")  # what does not wait goes first


def test_without_waits_the_order_is_the_dependency_order() -> None:
    made = order(RESOURCES)
    assert made.index("Handle") < made.index("Outputs") < made.index("Reader")
    assert set(made) == set(RESOURCES)
