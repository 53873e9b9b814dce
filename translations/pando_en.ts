<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="en_US" sourcelanguage="en">
<context>
    <name>DeploysView</name>
    <message numerus="yes">
        <source>Output: %n line(s)</source>
        <translation>
            <numerusform>Output: %n line</numerusform>
            <numerusform>Output: %n lines</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>JobsTab</name>
    <message numerus="yes">
        <source>%n stage(s): a job runs with what the jobs before it passed</source>
        <translation>
            <numerusform>%n stage: a job runs with what the jobs before it passed</numerusform>
            <numerusform>%n stages: a job runs with what the jobs before it passed</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>LogLines</name>
    <message numerus="yes">
        <source>%n match(es)</source>
        <translation>
            <numerusform>%n match</numerusform>
            <numerusform>%n matches</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Resume (%n new)</source>
        <translation>
            <numerusform>Resume (%n new)</numerusform>
            <numerusform>Resume (%n new)</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>PairingLink</name>
    <message numerus="yes">
        <source>the fingerprint (fp=) must be 64 hex digits, got %n character(s)</source>
        <translation>
            <numerusform>the fingerprint (fp=) must be 64 hex digits, got %n character</numerusform>
            <numerusform>the fingerprint (fp=) must be 64 hex digits, got %n characters</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>RunsView</name>
    <message numerus="yes">
        <source>%n instance(s) stop for good: their queued and running runs are aborted and their configs dropped. Their runs, versions and secrets stay; setting an instance again brings it back, paused.</source>
        <translation>
            <numerusform>%n instance stops for good: its queued and running runs are aborted and its config dropped. Its runs, versions and secrets stay; setting it again brings it back, paused.</numerusform>
            <numerusform>%n instances stop for good: their queued and running runs are aborted and their configs dropped. Their runs, versions and secrets stay; setting an instance again brings it back, paused.</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>Sidebar</name>
    <message numerus="yes">
        <source>%1, %n waiting</source>
        <translation>
            <numerusform>%1, %n waiting</numerusform>
            <numerusform>%1, %n waiting</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>SourcesView</name>
    <message numerus="yes">
        <source>%n repository(s) the token of %1 can see</source>
        <translation>
            <numerusform>%n repository the token of %1 can see</numerusform>
            <numerusform>%n repositories the token of %1 can see</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>pando::desktop::AppHookModel</name>
    <message numerus="yes">
        <source>every %n hour(s)</source>
        <translation>
            <numerusform>every hour</numerusform>
            <numerusform>every %n hours</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>every %n minute(s)</source>
        <translation>
            <numerusform>every minute</numerusform>
            <numerusform>every %n minutes</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>every %n second(s)</source>
        <translation>
            <numerusform>every second</numerusform>
            <numerusform>every %n seconds</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>pando::desktop::AppSettings</name>
    <message numerus="yes">
        <source>%1; build cache %2 in %n image(s)</source>
        <translation>
            <numerusform>%1; build cache %2 in %n image</numerusform>
            <numerusform>%1; build cache %2 in %n images</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>pando::desktop::ApprovalsModel</name>
    <message numerus="yes">
        <source>%n minute(s)</source>
        <translation>
            <numerusform>%n minute</numerusform>
            <numerusform>%n minutes</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n hour(s)</source>
        <translation>
            <numerusform>%n hour</numerusform>
            <numerusform>%n hours</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n day(s)</source>
        <translation>
            <numerusform>%n day</numerusform>
            <numerusform>%n days</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>pando::desktop::ConnectionsModel</name>
    <message numerus="yes">
        <source>%n day(s)</source>
        <comment>access ends in</comment>
        <translation>
            <numerusform>%n day</numerusform>
            <numerusform>%n days</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n hour(s)</source>
        <comment>access ends in</comment>
        <translation>
            <numerusform>%n hour</numerusform>
            <numerusform>%n hours</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>pando::desktop::DesktopState</name>
    <message numerus="yes">
        <source>%n approval(s) waiting</source>
        <translation>
            <numerusform>%n approval waiting</numerusform>
            <numerusform>%n approvals waiting</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n app(s) failing</source>
        <translation>
            <numerusform>%n app failing</numerusform>
            <numerusform>%n apps failing</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n deploy(s) in progress</source>
        <translation>
            <numerusform>%n deploy in progress</numerusform>
            <numerusform>%n deploys in progress</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n pipeline(s) failing</source>
        <translation>
            <numerusform>%n pipeline failing</numerusform>
            <numerusform>%n pipelines failing</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>pando::desktop::PipelinesModel</name>
    <message numerus="yes">
        <source>%n day(s) after it ends</source>
        <translation>
            <numerusform>%n day after it ends</numerusform>
            <numerusform>%n days after it ends</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>pando::desktop::RunTreeModel</name>
    <message numerus="yes">
        <source>%n step(s)</source>
        <translation>
            <numerusform>%n step</numerusform>
            <numerusform>%n steps</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n unchanged</source>
        <translation>
            <numerusform>%n unchanged</numerusform>
            <numerusform>%n unchanged</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n failed</source>
        <translation>
            <numerusform>%n failed</numerusform>
            <numerusform>%n failed</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>pando::desktop::RuntimesStatus</name>
    <message numerus="yes">
        <source>%1 · failing certificates: %n</source>
        <translation>
            <numerusform>%1 · failing certificates: %n</numerusform>
            <numerusform>%1 · failing certificates: %n</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n signing keys, newest first: %1</source>
        <translation>
            <numerusform>%n signing key, newest first: %1</numerusform>
            <numerusform>%n signing keys, newest first: %1</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>pando::desktop::TrayIcon</name>
    <message numerus="yes">
        <source>%n approval(s) waiting</source>
        <translation>
            <numerusform>%n approval waiting</numerusform>
            <numerusform>%n approvals waiting</numerusform>
        </translation>
    </message>
</context>
</TS>
